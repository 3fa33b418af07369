package lifecycle

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Join is the verdict of the join check on a prefill continuation: can the
// fall-back's first output follow what the client already has, in one
// answer? A model that does not take the prefill answers from scratch, and
// its fresh answer glued onto the cut one is a splice ("…theEvery…"). The
// check reads only the end of what was sent and the first joinLook
// characters of the output: it runs once per continuation, not per token.
type Join uint8

const (
	// Joins: the output can follow what was sent.
	Joins Join = iota
	// JoinOpener: the output opens like an answer ("Sure!", "Certainly,",
	// "Of course", "当然", a word and an exclamation mark).
	JoinOpener
	// JoinRepeat: the output repeats the answer's start after a preamble of
	// its own ("Here you go: The cat sat on…").
	JoinRepeat
	// JoinHeading: a markdown heading where the text was cut mid-line, or
	// of a level the answer so far does not nest under.
	JoinHeading
	// JoinFence: a code fence opened where the text was cut mid-line or
	// inside a code block.
	JoinFence
	// JoinGlued: a new word glued onto the cut one without a space: a
	// capital after a lower-case letter ("theEvery") or right after a full
	// stop ("mat.Every").
	JoinGlued
	// JoinCapital: a capitalised word after a cut in the middle of a
	// sentence, that the text so far does not use as a name.
	JoinCapital
	// JoinBreak: a new capitalised paragraph after a line of prose cut in
	// the middle of a sentence.
	JoinBreak
	// JoinSyntax: output that cannot follow the code or JSON sent: prose
	// glued into a code line, or a JSON answer continued outside a string
	// by something no JSON value starts with.
	JoinSyntax
	// JoinList: a list item ("- ", "1. ") where the text was cut mid-line.
	JoinList
)

func (j Join) String() string {
	switch j {
	case Joins:
		return "joins"
	case JoinOpener:
		return "an answer opener"
	case JoinRepeat:
		return "the answer's start repeated after a preamble"
	case JoinHeading:
		return "a heading that does not follow the text"
	case JoinFence:
		return "a code fence that does not follow the text"
	case JoinGlued:
		return "a new word glued onto the cut text"
	case JoinCapital:
		return "a capitalised word after a mid-sentence cut"
	case JoinBreak:
		return "a new paragraph after a mid-sentence cut"
	case JoinSyntax:
		return "text that cannot follow the code sent"
	case JoinList:
		return "a list item that does not start a line"
	}
	return "Join(" + string(rune('0'+j)) + ")"
}

// joinLook is how many characters of a prefill continuation's output
// (leading whitespace aside) the join check reads; the output is held until
// it has them or ends. 64 characters hold the longest opener and a short
// preamble before a repeated start.
const joinLook = 64

// repeatLen is how many characters of the answer's start a preamble must
// be followed by to be taken as a restart (JoinRepeat); a shorter answer
// must be repeated whole and be at least repeatMin characters long.
const (
	repeatLen = 16
	repeatMin = 8
)

// JudgeJoin judges whether next, the first output of a fall-back given
// sent as a prefill (leading whitespace included), can follow sent in one
// answer. It reads the end of sent and the first joinLook characters of
// next after its leading whitespace. (Output that opens with sent's first
// characters is a restart, which Continuation judges before this check.)
// names are other texts of the conversation (the user's question): a
// capitalised word they use as a name may follow a mid-sentence cut.
//
// The rules, in order: the answer's start after a preamble (JoinRepeat);
// an answer opener (JoinOpener); a markdown heading or a code fence where
// the text was not at a line break, or that does not fit the document
// (JoinHeading, JoinFence); inside JSON or code, what its syntax cannot
// follow (JoinSyntax); a list item mid-line (JoinList); a capital (after
// any emphasis, "**Paris**") glued onto a cut word or right after a full
// stop (JoinGlued); a new capitalised paragraph after prose cut
// mid-sentence (JoinBreak); a capitalised word after a mid-sentence cut
// that the text and names do not use as a name (JoinCapital). Scripts
// without case (CJK, Arabic, Hebrew, Devanagari) get the first rules only:
// a fresh sentence glued into them, like one after a sentence boundary in
// any script, reads as a continuation, which is why the capability itself
// is verified by the continuation probe.
func JudgeJoin(sent, next string, names ...string) Join {
	sent = strings.TrimLeft(sent, spaces)
	body := strings.TrimLeft(next, spaces)
	if sent == "" || body == "" {
		return Joins
	}
	lead := next[:len(next)-len(body)]
	body = body[:runesLen(body, joinLook)]
	pt := strings.TrimRight(sent, spaces)
	ws := sent[len(pt):] + lead // the whitespace at the join
	fenced := strings.Count(sent, "```")%2 == 1
	json := !fenced && (sent[0] == '{' || sent[0] == '[')
	str := json && inString(sent) // a JSON string's text: names are common
	json = json && !str
	code := fenced || json

	if repeatsStart(pt, body) {
		return JoinRepeat
	}
	if opener(body) {
		return JoinOpener
	}
	newline := strings.IndexByte(ws, '\n') >= 0
	line := lastLine(pt)
	if h := headingLevel(body); h > 0 && !code {
		if !newline || !nestsUnder(sent, h) {
			return JoinHeading
		}
		return Joins
	}
	if strings.HasPrefix(body, "```") {
		// A fence opens on a line of its own, outside a block; one that
		// closes a block carries no language.
		open := !code
		if !newline || (open && !introduces(line)) || (!open && strings.TrimRight(firstLine(body[3:]), " ") != "") {
			return JoinFence
		}
		return Joins
	}
	last, _ := utf8.DecodeLastRuneInString(pt)
	first, size := utf8.DecodeRuneInString(body)
	if json && !jsonFollows(last, first) {
		return JoinSyntax
	}
	if str && !stringCloses(body) {
		return JoinSyntax
	}
	if (strings.HasPrefix(body, `{"`) || strings.HasPrefix(body, `[{`) || strings.HasPrefix(body, `["`)) &&
		isWordRune(last) && (!fenced || ws == "") {
		return JoinSyntax // a JSON answer after a word
	}
	if code && prose(body) {
		return JoinSyntax
	}
	if !code && !newline && listItem(body) {
		return JoinList
	}
	if b := strings.TrimLeft(body, "*_"); len(b) < len(body) && !code {
		// Emphasis opens the output ("**Paris** is…"): the case rules
		// read the word it emphasises.
		if r, _ := utf8.DecodeRuneInString(b); unicode.IsUpper(r) {
			first, body = r, b
			size = utf8.RuneLen(r)
		}
	}
	upper := unicode.IsUpper(first) && !code
	switch {
	case ws == "":
		// Glued to the cut text: the cut word goes on, or punctuation.
		if !upper {
			return Joins
		}
		second, _ := utf8.DecodeRuneInString(body[size:])
		switch {
		case unicode.IsLower(last):
			return JoinGlued // "theEvery"
		case unicode.IsUpper(last) && unicode.IsLower(second):
			return JoinGlued // "NASAEvery"; "AP"+"I" and "T"+"he" go on
		case terminal(last) || last == ',' || last == ';':
			return JoinGlued // "mat.Every", "mat,Every"
		}
		return Joins
	case sentenceEnd(pt):
		return Joins
	case newline:
		if upper && proseLine(line) {
			return JoinBreak
		}
		return Joins
	case upper && !str && !lineStart(line) && !named(pt, firstWord(body), names):
		return JoinCapital
	}
	return Joins
}

// inString reports whether the JSON text s ends inside a string.
func inString(s string) bool {
	in := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if in {
				i++
			}
		case '"':
			in = !in
		}
	}
	return in
}

// prose reports whether body opens with a sentence: a capitalised word, a
// space and a lower-case word ("The cat"), which no code line starts with.
func prose(body string) bool {
	w := firstWord(body)
	r, _ := utf8.DecodeRuneInString(w)
	if len(w) < 2 || !unicode.IsUpper(r) || len(body) < len(w)+2 || body[len(w)] != ' ' {
		return false
	}
	next, _ := utf8.DecodeRuneInString(body[len(w)+1:])
	return unicode.IsLower(next)
}

// listItem reports whether body opens with a list item: a bullet ("- ",
// "* ", "+ ") or a number of one or two digits with "." or ")" and a
// space (a year ending a sentence is no item).
func listItem(body string) bool {
	if len(body) >= 2 && strings.IndexByte("-*+", body[0]) >= 0 && body[1] == ' ' {
		return true
	}
	n := 0
	for n < len(body) && n < 3 && body[n] >= '0' && body[n] <= '9' {
		n++
	}
	return n >= 1 && n <= 2 && len(body) > n+1 && (body[n] == '.' || body[n] == ')') && body[n+1] == ' '
}

// lineStart reports whether what precedes the cut on its line is only a
// list, quote or table marker ("- ", "2. ", "> ", "| "): the next word
// starts an item and may be capitalised.
func lineStart(line string) bool {
	l := strings.TrimSpace(line)
	switch {
	case l == "", l == "-", l == "*", l == "+", l == ">", strings.HasSuffix(l, "|"):
		return true
	}
	return listNumber(l) && len(strings.Fields(l)) == 1
}

// repeatsStart reports whether body repeats the start of the answer pt
// after a preamble: pt's first repeatLen bytes (all of a shorter pt, at
// least repeatMin) after a space or punctuation within the first joinLook
// characters.
func repeatsStart(pt, body string) bool {
	n := runesLen(pt, repeatLen)
	if utf8.RuneCountInString(pt[:n]) < repeatMin {
		return false
	}
	start := pt[:n]
	for from := 1; from < len(body); {
		i := strings.Index(body[from:], start)
		if i < 0 {
			return false
		}
		at := from + i
		prev, _ := utf8.DecodeLastRuneInString(body[:at])
		if unicode.IsSpace(prev) || unicode.IsPunct(prev) || unicode.IsSymbol(prev) {
			return true
		}
		from = at + 1
	}
	return false
}

// openers open an answer, not its middle: the output starting with one
// (followed by a non-letter) is a restart.
var openers = []string{
	"Sure", "Certainly", "Of course", "Absolutely", "Okay", "OK,", "Hello", "Hi,", "Hi!", "Hi there", "Hey",
	"Great question", "Good question", "I'd be happy", "I would be happy", "I'm happy to", "Happy to help",
	"I can help", "As an AI", "Yes,", "Yes!", "No problem",
	"Claro", "Por supuesto", "Bien sûr", "Certainement", "Avec plaisir", "D'accord",
	"Natürlich", "Gerne", "Selbstverständlich", "Certo", "Con piacere", "Com certeza",
	"Конечно", "Разумеется", "Безусловно",
	"当然", "好的", "没问题", "もちろん", "はい、", "はい。", "承知しました", "물론", "네,",
	"بالتأكيد", "بالطبع", "بكل سرور", "בטח", "בוודאי", "בשמחה", "ज़रूर", "बिल्कुल", "जी हाँ",
}

// opener reports whether body opens like an answer: one of the openers,
// or a first word followed by an exclamation mark ("Great!", "¡Hola!").
func opener(body string) bool {
	for _, o := range openers {
		if strings.HasPrefix(body, o) {
			r, _ := utf8.DecodeRuneInString(body[len(o):])
			if l := lastRune(o); len(body) == len(o) || !unicode.IsLetter(r) || unicode.SimpleFold(l) == l {
				// A word must end after an opener in a cased script
				// ("Sure", not "Surely"); others have no word breaks.
				return true
			}
		}
	}
	b := strings.TrimPrefix(body, "¡")
	w := firstWord(b)
	if w == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(w)
	if unicode.IsLower(r) {
		return false
	}
	rest := b[len(w):]
	return strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, " !") || strings.HasPrefix(rest, "！")
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// headingLevel returns the level of a markdown heading body opens with, 0
// if none.
func headingLevel(body string) int {
	n := 0
	for n < len(body) && body[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n == len(body) || body[n] != ' ' {
		return 0
	}
	return n
}

// nestsUnder reports whether a heading of level h can follow sent: sent
// has a heading of a higher level, or one of the same level below 1 (an
// answer has one title).
func nestsUnder(sent string, h int) bool {
	for line := range strings.Lines(sent) {
		if l := headingLevel(strings.TrimLeft(line, " ")); l > 0 && (l < h || (l == h && h > 1)) {
			return true
		}
	}
	return false
}

// introduces reports whether a line can be followed by a code block: it
// ends with a colon, a full stop, or is empty.
func introduces(line string) bool {
	line = strings.TrimRight(line, spaces)
	if line == "" {
		return true
	}
	r := lastRune(line)
	return r == ':' || r == '：' || terminal(r)
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// terminal reports whether r ends a sentence.
func terminal(r rune) bool {
	switch r {
	case '.', '!', '?', '。', '！', '？', '…', '؟', '।', '۔':
		return true
	}
	return false
}

// sentenceEnd reports whether pt (no trailing whitespace) ends a sentence:
// a terminal mark, possibly followed by closing quotes or brackets, or a
// colon.
func sentenceEnd(pt string) bool {
	s := strings.TrimRightFunc(pt, func(r rune) bool {
		return r == '"' || r == '\'' || r == ')' || r == ']' || r == '”' || r == '’' || r == '»' || r == '*' || r == '」' || r == '）'
	})
	r := lastRune(s)
	return terminal(r) || r == ':' || r == '：'
}

// proseLine reports whether a line is prose that stopped mid-sentence: not
// a heading, list item, table row or quote, and long enough not to be a
// title (more than six words).
func proseLine(line string) bool {
	l := strings.TrimLeft(line, " \t")
	if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "|") || strings.HasPrefix(l, ">") ||
		strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* ") || strings.HasPrefix(l, "+ ") || listNumber(l) {
		return false
	}
	return len(strings.Fields(l)) > 6
}

// listNumber reports whether l starts with "1." or "1)".
func listNumber(l string) bool {
	n := 0
	for n < len(l) && l[n] >= '0' && l[n] <= '9' {
		n++
	}
	return n > 0 && n < len(l) && (l[n] == '.' || l[n] == ')')
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// firstWord returns body's leading run of letters, digits and
// apostrophes.
func firstWord(body string) string {
	for i, r := range body {
		if !isWordRune(r) && r != '\'' && r != '’' {
			return body[:i]
		}
	}
	return body
}

// jsonFollows reports whether first can follow last outside a string of
// a JSON text.
func jsonFollows(last, first rune) bool {
	const value = `"{[-0123456789tfn`
	var ok string
	switch {
	case last == '{':
		ok = `"}`
	case last == '[':
		ok = value + "]"
	case last == ':' || last == ',':
		ok = value
	case last == '"' || last == '}' || last == ']':
		ok = ",:}]"
	case last >= '0' && last <= '9':
		ok = "0123456789.eE,}]"
	case last >= 'a' && last <= 'z': // true, false, null
		ok = "abcdefghijklmnopqrstuvwxyz,}]"
	default:
		return true
	}
	return strings.ContainsRune(ok, first)
}

// stringCloses reports whether body, the continuation of a JSON string,
// closes it where JSON allows: its first unescaped quote is followed by
// ':', ',', '}' or ']' (or the end of what was read).
func stringCloses(body string) bool {
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '\\':
			i++
		case '"':
			rest := strings.TrimLeft(body[i+1:], spaces)
			return rest == "" || strings.ContainsRune(":,}]", rune(rest[0]))
		}
	}
	return true
}

// named reports whether sent or one of the names texts uses w as a name.
func named(pt, w string, names []string) bool {
	if usedAsName(pt, w) {
		return true
	}
	for _, n := range names {
		if usedAsName(n, w) {
			return true
		}
	}
	return false
}

// usedAsName reports whether the text uses the capitalised word w in the
// middle of a sentence (a name: "Paris", "API", "I"), so that a cut
// before it again is no restart. A word the text capitalises only at
// sentence starts ("The", "Every") is not a name.
func usedAsName(pt, w string) bool {
	if w == "" {
		return false
	}
	w = strings.TrimRight(w, "'’")
	for from := 0; from < len(pt); {
		i := strings.Index(pt[from:], w)
		if i < 0 {
			return false
		}
		at := from + i
		from = at + len(w)
		if at < 2 || pt[at-1] != ' ' {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(pt[from:]); from < len(pt) && isWordRune(r) {
			continue // a longer word
		}
		if prev := lastRune(pt[:at-1]); isWordRune(prev) || prev == ',' {
			return true
		}
	}
	return false
}

// completeRunes returns the number of characters in b, a trailing
// incomplete one aside (the rest of it is in the next delta).
func completeRunes(b []byte) int {
	n := len(b)
	for i := n - 1; i >= max(n-utf8.UTFMax, 0); i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				n = i
			}
			break
		}
	}
	return utf8.RuneCount(b[:n])
}

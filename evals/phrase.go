package evals

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// findPhrase reports the first phrase found in the first limit bytes of s
// (limit 0: all of s), ASCII case-insensitively, reading U+2019 as ': the
// phrase found at the smallest position, the earliest in phrases at that
// position. A phrase whose first character is a word character matches only
// at a word start.
//
// It scans s once, in place, with a per-byte table of the phrase set
// (compiled once per phrase list and cached): a position is a candidate only
// when its byte can begin a phrase and the byte before it ends a word (or
// the phrase does not need a word start). A candidate's first two folded
// characters select, as a bit set, the phrases worth comparing. Lists of more
// than 64 phrases take [findPhraseLinear], with the same result.
func findPhrase(s string, phrases []string, limit int) (string, bool) {
	if len(phrases) == 0 || s == "" {
		return "", false
	}
	if len(phrases) > 64 {
		return findPhraseLinear(s, phrases, limit)
	}
	if limit > 0 && len(s) > limit {
		s = s[:limit]
	}
	ps := phraseSetFor(phrases)
	if ps.empty {
		return "", false
	}
	tab := &ps.tab
	// end is fStart when the byte before i may end a word (or i is 0), so
	// f&(fAnyPrev|end) is a candidate test without a branch on end.
	end := uint8(fStart)
	i := 0
	// Four bytes at a time: one test for the common case of no candidate.
	for ; i+4 <= len(s); i += 4 {
		b := s[i : i+4]
		f0, f1, f2, f3 := tab[b[0]], tab[b[1]], tab[b[2]], tab[b[3]]
		if f0&(fAnyPrev|end)|f1&(fAnyPrev|f0>>2&fStart)|f2&(fAnyPrev|f1>>2&fStart)|f3&(fAnyPrev|f2>>2&fStart) != 0 {
			for j := i; j < i+4; j++ {
				f := tab[s[j]]
				if f&(fAnyPrev|end) != 0 && ps.maybe(s, j) {
					if p, ok := ps.at(s, j); ok {
						return p, true
					}
				}
				end = f >> 2 & fStart
			}
			continue
		}
		end = f3 >> 2 & fStart
	}
	for ; i < len(s); i++ {
		f := tab[s[i]]
		if f&(fAnyPrev|end) != 0 {
			if p, ok := ps.at(s, i); ok {
				return p, true
			}
		}
		end = f >> 2 & fStart
	}
	return "", false
}

// Byte flags of a phraseSet's table.
const (
	// fStart: the byte can begin a character some phrase begins with.
	fStart = 1
	// fAnyPrev: fStart, and a phrase may begin at this byte after a word
	// character (it folds to a non-word character, or may start a ’).
	fAnyPrev = 2
	// fWordEnd: a phrase may begin right after this byte (a non-word byte,
	// or the last byte of a ’). findPhrase shifts it onto fStart.
	fWordEnd = 4
)

// phraseSet is a compiled phrase list for findPhrase.
type phraseSet struct {
	key     unsafe.Pointer // the list's backing array
	phrases []string       // a copy of the list
	empty   bool           // every phrase is ""
	tab     [256]uint8
	// first[c] and second[c]: the phrases whose first (second) character
	// folds to c. second includes every one-character phrase in every entry;
	// short holds just those.
	first, second [256]uint64
	short         uint64
}

func compilePhrases(phrases []string) *phraseSet {
	ps := &phraseSet{key: unsafe.Pointer(unsafe.SliceData(phrases)), phrases: append([]string(nil), phrases...), empty: true}
	var start [256]bool
	for k, p := range phrases {
		if p == "" {
			continue
		}
		ps.empty = false
		bit := uint64(1) << k
		ps.first[lowerASCII(p[0])] |= bit
		markFolded(&start, p[0])
		if len(p) == 1 {
			ps.short |= bit
		} else {
			ps.second[lowerASCII(p[1])] |= bit
		}
	}
	for b := range 256 {
		ps.second[b] |= ps.short
		c := byte(b)
		var f uint8
		if start[c] {
			f |= fStart
			if !isWordByte(lowerASCII(c)) || c == 0xe2 {
				f |= fAnyPrev
			}
		}
		if !isWordByte(lowerASCII(c)) || c == 0x99 {
			f |= fWordEnd
		}
		ps.tab[b] = f
	}
	return ps
}

// maybe is a quick test of candidate position i: false when no phrase
// begins with its two characters, as at would find (when neither starts a
// ’ and there are two).
func (ps *phraseSet) maybe(s string, i int) bool {
	if i+1 >= len(s) {
		return true
	}
	c, c2 := s[i], s[i+1]
	return c == 0xe2 || c2 == 0xe2 || ps.first[lowerASCII(c)]&ps.second[lowerASCII(c2)] != 0
}

// at reports the first phrase (in list order) that matches s at the
// candidate position i, applying findPhraseLinear's exact tests.
func (ps *phraseSet) at(s string, i int) (string, bool) {
	if insideCurly(s, i) {
		return "", false
	}
	c, next := s[i], i+1
	if isCurly(s, i) {
		c, next = '\'', i+3
	} else {
		c = lowerASCII(c)
	}
	if i > 0 && isWordByte(c) && isWordByte(prevFolded(s, i)) {
		return "", false
	}
	m := ps.first[c]
	if next < len(s) {
		c2 := lowerASCII(s[next])
		if isCurly(s, next) {
			c2 = '\''
		}
		m &= ps.second[c2]
	} else {
		m &= ps.short
	}
	for m != 0 {
		p := ps.phrases[bits.TrailingZeros64(m)]
		if hasPrefixFold(s[i:], p) {
			return p, true
		}
		m &= m - 1
	}
	return "", false
}

// same reports whether ps was compiled from phrases: the same backing array
// holding the same strings (same bytes in memory, so the same text).
func (ps *phraseSet) same(phrases []string) bool {
	if ps.key != unsafe.Pointer(unsafe.SliceData(phrases)) || len(ps.phrases) != len(phrases) {
		return false
	}
	for k, p := range phrases {
		q := ps.phrases[k]
		if len(p) != len(q) || unsafe.StringData(p) != unsafe.StringData(q) {
			return false
		}
	}
	return true
}

// phraseCache holds the compiled sets of the phrase lists in use: a caller
// passes the same list (DefaultRefusals, a route's refusals, a check's
// phrases) again and again.
var phraseCache [8]atomic.Pointer[phraseSet]

func phraseSetFor(phrases []string) *phraseSet {
	h := uintptr(unsafe.Pointer(unsafe.SliceData(phrases)))
	slot := &phraseCache[(h>>4^h>>10)%uintptr(len(phraseCache))]
	if ps := slot.Load(); ps != nil && ps.same(phrases) {
		return ps
	}
	ps := compilePhrases(phrases)
	slot.Store(ps)
	return ps
}

package evals

// The token-wall detector keeps two histograms of output-token counts per
// target: the window's (counts) and the baseline's (decayed weights). They
// were maps; answers are short, so counts below denseTokens live in arrays
// indexed by the count (grown as larger counts appear) and only the rest in
// maps. Both behave exactly as the maps did: an absent count reads 0, the
// baseline's decay visits exactly the counts a map would hold.

// denseTokens bounds the counts kept in arrays.
const denseTokens = 1 << 14

// grownTo returns the length an array indexed by counts grows to so that
// it holds v (< denseTokens): a power of two from 256.
func grownTo(n int, v int32) int {
	n = max(n, 256)
	for int(v) >= n {
		n *= 2
	}
	return n
}

// winHist counts the window's responses per output-token count
// (map[int32]int32 semantics: a count that drops to 0 is deleted).
type winHist struct {
	dense []int32
	big   map[int32]int32
}

func (h *winHist) get(v int32) int32 {
	if v >= 0 && int(v) < len(h.dense) {
		return h.dense[v]
	}
	return h.big[v] // nil map: 0
}

func (h *winHist) inc(v int32) {
	if v >= 0 && v < denseTokens {
		if int(v) >= len(h.dense) {
			h.dense = append(h.dense, make([]int32, grownTo(len(h.dense), v)-len(h.dense))...)
		}
		h.dense[v]++
		return
	}
	if h.big == nil {
		h.big = make(map[int32]int32)
	}
	h.big[v]++
}

// dec is the map's `if n := h[v]-1; n > 0 { h[v] = n } else { delete(h, v) }`.
func (h *winHist) dec(v int32) {
	if v >= 0 && int(v) < len(h.dense) {
		h.dense[v] = max(h.dense[v]-1, 0)
		return
	}
	if n := h.big[v] - 1; n > 0 {
		h.big[v] = n
	} else {
		delete(h.big, v)
	}
}

// baseHist is the baseline's decayed weight per output-token count
// (map[int32]float64 semantics). keys lists the dense counts a map would
// hold (in any order: every operation treats each count alone), present
// marks them.
type baseHist struct {
	dense   []float64
	present []bool
	keys    []int32
	big     map[int32]float64
}

func (h *baseHist) get(v int32) float64 {
	if v >= 0 && int(v) < len(h.dense) {
		return h.dense[v]
	}
	return h.big[v]
}

// inc is the map's h[v]++.
func (h *baseHist) inc(v int32) {
	if v >= 0 && v < denseTokens {
		if int(v) >= len(h.dense) {
			n := grownTo(len(h.dense), v)
			h.dense = append(h.dense, make([]float64, n-len(h.dense))...)
			h.present = append(h.present, make([]bool, n-len(h.present))...)
		}
		if !h.present[v] {
			h.present[v] = true
			h.keys = append(h.keys, v)
		}
		h.dense[v]++
		return
	}
	if h.big == nil {
		h.big = make(map[int32]float64)
	}
	h.big[v]++
}

// scale multiplies every weight by f.
func (h *baseHist) scale(f float64) {
	for _, k := range h.keys {
		h.dense[k] *= f
	}
	for k, v := range h.big {
		h.big[k] = v * f
	}
}

// decay multiplies every weight by f and deletes those that fall under
// 0.01.
func (h *baseHist) decay(f float64) {
	for i := 0; i < len(h.keys); {
		k := h.keys[i]
		v := h.dense[k] * f
		if v >= 0.01 {
			h.dense[k] = v
			i++
			continue
		}
		h.dense[k], h.present[k] = 0, false
		last := len(h.keys) - 1
		h.keys[i] = h.keys[last]
		h.keys = h.keys[:last]
	}
	for k, v := range h.big {
		if v *= f; v < 0.01 {
			delete(h.big, k)
		} else {
			h.big[k] = v
		}
	}
}

// len is the number of counts a map would hold.
func (h *baseHist) len() int { return len(h.keys) + len(h.big) }

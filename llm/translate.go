package llm

import (
	"maps"
	"slices"
)

// Translate encodes req, which was decoded from the from format, in the to
// format. Fields the normalized model does not know (Request.Extra) belong to
// the source format: they are written back verbatim when from and to are the
// same format, and are an *UnsupportedError ("extra.<field>") otherwise. The
// caller decides whether to drop them (delete them from Extra) and translate
// again. Everything else the target cannot express is the target codec's
// *UnsupportedError.
func Translate(req *Request, from Format, to Codec) ([]byte, error) {
	if from != to.Format() && len(req.Extra) > 0 {
		k := slices.Sorted(maps.Keys(req.Extra))[0]
		return nil, &UnsupportedError{Format: to.Format(), Feature: "extra." + k,
			Reason: "a " + string(from) + " request field the normalized model does not carry"}
	}
	return to.EncodeRequest(req)
}

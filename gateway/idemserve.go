package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/http"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

// serveIdempotent serves a request carrying an Idempotency-Key: the first
// request with a key executes; concurrent duplicates wait for it and get the
// same response; a retry within the TTL gets the stored response without a
// second upstream call. A key reused with a different body is a 422.
func (s *Server) serveIdempotent(w http.ResponseWriter, r *http.Request, in llm.Codec, req *llm.Request, key string, body []byte, id string) {
	sum := sha256.Sum256(body)
	fp := hex.EncodeToString(sum[:])
	// Keys are per client: one client never gets another's replay.
	scoped := clientOf(r.Context()) + "\x00" + r.URL.Path + "\x00" + key
	e, leader := s.idem.begin(time.Now(), scoped, fp)
	if !leader {
		if e.fingerprint != fp {
			writeLLMError(w, in, &llm.Error{Status: 422, Type: llm.ErrInvalidRequest, Param: "Idempotency-Key",
				Message: "this Idempotency-Key was used with a different request body"})
			return
		}
		select {
		case <-e.done:
		case <-r.Context().Done():
			return
		}
		if !e.storable {
			writeLLMError(w, in, &llm.Error{Status: 409, Type: llm.ErrInvalidRequest, Param: "Idempotency-Key",
				Message: "a request with this Idempotency-Key was processed but its response cannot be replayed; retry with a new key"})
			return
		}
		s.m.idemReplays.Inc()
		h := w.Header()
		maps.Copy(h, e.header)
		h[HeaderReplay] = []string{"true"}
		w.WriteHeader(e.status)
		_, _ = w.Write(e.body)
		return
	}
	rec := &recorder{ResponseWriter: w, limit: maxReplayBody}
	x := s.newExchange(rec, in, req, id)
	x.client = clientOf(r.Context())
	defer func() {
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		s.idem.complete(time.Now(), e, status, w.Header().Clone(), rec.buf, !rec.over && r.Context().Err() == nil)
	}()
	x.run(r.Context(), r.Header.Get(HeaderHint))
}

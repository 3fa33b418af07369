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
			writeLLMError(w, in, idemConflictError())
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
		s.replay(w, e.status, e.header, e.body)
		return
	}
	var pending []byte // the fleet's record of this request's claim
	if fs := s.fleet; fs != nil {
		c, fr, p := fs.claimIdem(r.Context(), scoped, fp, id)
		switch {
		case c == idemReplay:
			s.idem.complete(time.Now(), e, fr.Status, fr.Header, fr.Body, true)
			s.replay(w, fr.Status, fr.Header, fr.Body)
			return
		case c == idemConflict:
			le := idemConflictError()
			s.idem.complete(time.Now(), e, le.Status, nil, nil, false)
			writeLLMError(w, in, le)
			return
		case c == idemStoreDown && fs.failClosed:
			s.idem.complete(time.Now(), e, http.StatusServiceUnavailable, nil, nil, false)
			writeLLMError(w, in, stateUnavailable())
			return
		}
		pending = p // nil when the store is down: this replica decides alone
	}
	rec := &recorder{ResponseWriter: w, limit: maxReplayBody}
	x := s.newExchange(rec, in, req, id)
	x.admitted(admissionOf(r.Context()))
	x.bestEffort = bestEffort(r.Header)
	defer x.releaseMemory()
	defer func() {
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		header, storable := w.Header().Clone(), !rec.over && r.Context().Err() == nil
		s.idem.complete(time.Now(), e, status, header, rec.buf, storable)
		if pending != nil {
			_ = http.NewResponseController(w).Flush() // the client has its answer before the store hears of it
			s.fleet.releaseIdem(scoped, pending, fp, status, header, rec.buf, storable, s.idem.ttl)
		}
	}()
	x.run(r.Context(), r.Header.Get(HeaderHint))
}

// replay writes a stored response, marked as a replay.
func (s *Server) replay(w http.ResponseWriter, status int, header http.Header, body []byte) {
	s.m.idemReplays.Inc()
	h := w.Header()
	maps.Copy(h, header)
	h[HeaderReplay] = []string{"true"}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// idemConflictError is the answer to a key reused with another body.
func idemConflictError() *llm.Error {
	return &llm.Error{Status: 422, Type: llm.ErrInvalidRequest, Param: "Idempotency-Key",
		Message: "this Idempotency-Key was used with a different request body"}
}

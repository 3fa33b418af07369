package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// A fleet shares idempotency records through its store, so the same key
// sent to two replicas makes one upstream call. The replica that leads
// locally (idemStore) also claims the key in the store: it creates a
// pending record naming its request, for a lease of the request timeout
// plus a margin (a replica that dies mid-request frees the key when the
// lease ends). A replica that finds a pending record waits for it, polling
// the store, and replays the completed record; a record with another body
// is the same 422 as on one replica. The leader replaces its pending record
// by the completed response when it is a replayable 2xx, and deletes it
// otherwise (a duplicate that was waiting then executes itself, as a retry
// would). Each store call is bounded by state.timeout; when the store
// fails, the replica decides on its own (local) or refuses (fail_closed).

// idemRecord is an idempotency record in the fleet's store.
type idemRecord struct {
	// Owner is the leading request's ID, while pending.
	Owner       string      `json:"owner,omitempty"`
	Fingerprint string      `json:"fp"`
	Done        bool        `json:"done,omitempty"`
	Status      int         `json:"status,omitempty"`
	Header      http.Header `json:"header,omitempty"`
	Body        []byte      `json:"body,omitempty"`
}

// idemClaim is what the fleet's store says about a key.
type idemClaim uint8

const (
	idemLead      idemClaim = iota // this request executes
	idemReplay                     // replay rec
	idemConflict                   // the key was used with another body
	idemStoreDown                  // the store did not answer
)

// Polling a pending record: from 5ms, doubling up to 100ms.
const (
	idemPollMin = 5 * time.Millisecond
	idemPollMax = 100 * time.Millisecond
)

// claimIdem claims scoped in the fleet's store for request id, or waits for
// the replica that holds it. pending is the record to hand to releaseIdem.
func (fs *fleetState) claimIdem(ctx context.Context, scoped, fp, id string) (c idemClaim, rec *idemRecord, pending []byte) {
	key := "idem:" + scoped
	pending, _ = json.Marshal(idemRecord{Owner: id, Fingerprint: fp})
	poll := idemPollMin
	for {
		cctx, cancel := context.WithTimeout(ctx, fs.timeout)
		cur, created, err := fs.records.Create(cctx, key, pending, fs.lease)
		cancel()
		if err != nil {
			return idemStoreDown, nil, nil
		}
		if created {
			return idemLead, nil, pending
		}
		for {
			var r idemRecord
			if json.Unmarshal(cur, &r) != nil {
				return idemStoreDown, nil, nil
			}
			if r.Fingerprint != fp {
				return idemConflict, nil, nil
			}
			if r.Done {
				return idemReplay, &r, nil
			}
			t := time.NewTimer(poll)
			select {
			case <-ctx.Done():
				t.Stop()
				return idemStoreDown, nil, nil
			case <-t.C:
			}
			poll = min(2*poll, idemPollMax)
			cctx, cancel := context.WithTimeout(ctx, fs.timeout)
			var ok bool
			cur, ok, err = fs.records.Load(cctx, key)
			cancel()
			if err != nil {
				return idemStoreDown, nil, nil
			}
			if !ok {
				break // released: claim it
			}
		}
	}
}

// releaseIdem completes a claim: the response is kept for ttl when
// storable, otherwise the key is freed.
func (fs *fleetState) releaseIdem(scoped string, pending []byte, fp string, status int, header http.Header, body []byte, storable bool, ttl time.Duration) {
	var done []byte
	if storable && status >= 200 && status < 300 {
		done, _ = json.Marshal(idemRecord{Fingerprint: fp, Done: true, Status: status, Header: header, Body: body})
	}
	// The request may be over: its context is not this call's.
	ctx, cancel := context.WithTimeout(context.Background(), fs.timeout)
	defer cancel()
	_, _ = fs.records.Swap(ctx, "idem:"+scoped, pending, done, ttl)
}

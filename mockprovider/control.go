package mockprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/yamlfile"
)

// The control API, served by every provider under /_mock/ (in the spirit of
// Toxiproxy's):
//
//	GET    /_mock/faults        active faults with their counters ([]faults.Active)
//	POST   /_mock/faults        activate one spec or a list (JSON or YAML) -> {"ids": [...]}
//	DELETE /_mock/faults        remove every fault
//	DELETE /_mock/faults/{id}   remove one fault (404 if unknown)
//	POST   /_mock/reset         remove faults, clear journal, stats and prompt cache
//	GET    /_mock/journal       every attempt ([]JournalEntry); ?since=SEQ for later ones,
//	                            ?request_id=ID for one request's attempts
//	GET    /_mock/stats         counters (Stats)
//
// Errors are {"error": "..."}; a bad spec is a 400 naming the field.

// AddFaultsResponse is the answer to POST /_mock/faults.
type AddFaultsResponse struct {
	IDs []string `json:"ids"`
}

// ControlError is the body of a control API error.
type ControlError struct {
	Error string `json:"error"`
}

func newControl(m *Model, now func() time.Time) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_mock/faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, m.Faults())
	})
	mux.HandleFunc("POST /_mock/faults", func(w http.ResponseWriter, r *http.Request) {
		specs, err := decodeSpecs(r)
		if err != nil {
			writeJSON(w, 400, ControlError{Error: err.Error()})
			return
		}
		t := now()
		resp := AddFaultsResponse{IDs: []string{}}
		for i, s := range specs {
			err := s.Validate()
			if err == nil {
				err = reachable(m.Spec(), s.Selector)
			}
			if err != nil {
				msg := err.Error()
				if len(specs) > 1 {
					msg = "fault " + strconv.Itoa(i) + ": " + msg
				}
				writeJSON(w, 400, ControlError{Error: msg})
				return
			}
		}
		for _, s := range specs {
			id, err := m.AddFault(t, s)
			if err != nil { // validated above
				writeJSON(w, 400, ControlError{Error: err.Error()})
				return
			}
			resp.IDs = append(resp.IDs, id)
		}
		writeJSON(w, 201, resp)
	})
	mux.HandleFunc("DELETE /_mock/faults", func(w http.ResponseWriter, r *http.Request) {
		m.ResetFaults()
		w.WriteHeader(204)
	})
	mux.HandleFunc("DELETE /_mock/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if !m.RemoveFault(id) {
			writeJSON(w, 404, ControlError{Error: "no active fault " + strconv.Quote(id)})
			return
		}
		w.WriteHeader(204)
	})
	mux.HandleFunc("POST /_mock/reset", func(w http.ResponseWriter, r *http.Request) {
		m.Reset()
		w.WriteHeader(204)
	})
	mux.HandleFunc("GET /_mock/journal", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var since uint64
		if s := q.Get("since"); s != "" {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				writeJSON(w, 400, ControlError{Error: "since: not a sequence number: " + strconv.Quote(s)})
				return
			}
			since = v
		}
		rid := q.Get("request_id")
		out := []JournalEntry{}
		for _, e := range m.Journal() {
			if e.Seq <= since || (rid != "" && e.RequestID != rid) {
				continue
			}
			out = append(out, e)
		}
		writeJSON(w, 200, out)
	})
	mux.HandleFunc("GET /_mock/stats", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, m.Stats())
	})
	mux.HandleFunc("/_mock/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 404, ControlError{Error: "no control endpoint " + r.Method + " " + r.URL.Path})
	})
	return mux
}

// decodeSpecs reads one spec or a list, strictly, as YAML (JSON included).
func decodeSpecs(r *http.Request) ([]faults.Spec, error) {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, 1<<20)); err != nil {
		return nil, err
	}
	body := bytes.TrimSpace(buf.Bytes())
	if len(body) == 0 {
		return nil, errors.New("empty body: send a fault spec or a list of them")
	}
	if err := oneDocument(body); err != nil {
		return nil, err
	}
	if body[0] == '[' || body[0] == '-' {
		var specs []faults.Spec
		if _, err := yamlfile.Decode("body", body, &specs); err != nil {
			return nil, err
		}
		if len(specs) == 0 {
			return nil, errors.New("empty list: send a fault spec or a list of at least one")
		}
		return specs, nil
	}
	var s faults.Spec
	if _, err := yamlfile.Decode("body", body, &s); err != nil {
		return nil, err
	}
	return []faults.Spec{s}, nil
}

// oneDocument refuses a body holding more than one JSON value or YAML
// document ({"kind":"cut"}{"kind":"reset"}): all but the first would be
// dropped without a word. Send a list instead.
func oneDocument(body []byte) error {
	if json.Valid(body) || !bytes.HasPrefix(body, []byte("{")) && !bytes.HasPrefix(body, []byte("[")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		return nil // not JSON: YAML decoding reports what is wrong
	}
	if dec.More() {
		return fmt.Errorf("the body holds more than one JSON value (the second at byte %d): send one fault or a list [{...}, {...}]", dec.InputOffset()+1)
	}
	return nil
}

// reachable refuses a fault whose selector can never match a request to
// this mock: another provider's name, or a model it does not serve.
func reachable(p ProviderSpec, sel faults.Selector) error {
	if sel.Provider != "" && sel.Provider != p.Name {
		return fmt.Errorf("provider: %q can never match: this mock is provider %q (omit provider, or send the fault to %q's mock)", sel.Provider, p.Name, sel.Provider)
	}
	if sel.Model == "" {
		return nil
	}
	names := make([]string, len(p.Models))
	for i, ms := range p.Models {
		names[i] = ms.Name
		if ok, _ := path.Match(sel.Model, ms.Name); ok {
			return nil
		}
	}
	return fmt.Errorf("model: %q matches none of the models this mock serves (%s)", sel.Model, strings.Join(names, ", "))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = 500
		b, _ = json.Marshal(ControlError{Error: err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_, _ = w.Write([]byte("\n"))
}

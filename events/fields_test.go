package events

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// TestEveryFieldCarried: for each field of Event, an event with only that
// field set (to a value of its type found by reflection) survives the JSON
// writer (read back by ReadJSONL) and the packed log unchanged. A field
// added to Event that either writer does not carry fails here.
func TestEveryFieldCarried(t *testing.T) {
	typ := reflect.TypeFor[Event]()
	base := Event{Seq: 1, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Kind: AttemptEnd}
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			e := base
			v := reflect.ValueOf(&e).Elem().Field(i)
			setSome(t, v, f)
			if v.Equal(reflect.ValueOf(base).Field(i)) {
				t.Fatalf("could not give %s a value other than the base event's", f.Name)
			}
			var buf bytes.Buffer
			if err := WriteJSONL(&buf, []Event{e}); err != nil {
				t.Fatal(err)
			}
			got, err := ReadJSONL(&buf)
			if err != nil || len(got) != 1 {
				t.Fatalf("read back: %v %v", got, err)
			}
			if g := reflect.ValueOf(got[0]).Field(i); !g.Equal(v) {
				t.Errorf("JSON writer: %s = %v, want %v", f.Name, g, v)
			}
			var p Packed
			p.Append(&e)
			pe := p.Events()
			if len(pe) != 1 {
				t.Fatalf("packed: %d events", len(pe))
			}
			if g := reflect.ValueOf(pe[0]).Field(i); !g.Equal(v) {
				t.Errorf("packed log: %s = %v, want %v", f.Name, g, v)
			}
			// The packed log's JSON is the plain writer's.
			var pj bytes.Buffer
			if err := p.WriteJSONL(&pj); err != nil {
				t.Fatal(err)
			}
			var plain bytes.Buffer
			_ = WriteJSONL(&plain, []Event{e})
			if pj.String() != plain.String() {
				t.Errorf("packed JSON %s, plain %s", pj.String(), plain.String())
			}
		})
	}
}

// setSome sets v, field f of an Event, to a value unlike the zero value
// and the base event's.
func setSome(t *testing.T, v reflect.Value, f reflect.StructField) {
	switch {
	case f.Type == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 2, 3, 4, 5, 6, 789, time.UTC)))
		return
	case f.Type == reflect.TypeFor[time.Duration]():
		v.SetInt(int64(1234567 * time.Microsecond))
		return
	case f.Type == reflect.TypeFor[Kind]():
		v.SetString(string(RequestEnd))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("some " + f.Name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(9)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.125)
	default:
		t.Fatalf("field %s of kind %s: teach setSome a value for it", f.Name, v.Kind())
	}
}

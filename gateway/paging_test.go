package gateway

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestPageStateRoundTrip(t *testing.T) {
	for _, s := range []*pageState{
		{unit: 0, rows: 0, remaining: -1},
		{unit: -4069959284402364209, rows: 3, remaining: 7, key: [][]byte{{0, 0, 0, 1}}, inPartition: 2},
		{unit: 12, rows: 1 << 30, remaining: 0, key: [][]byte{{0, 0, 0, 1}, {}, []byte("é")}, inPartition: 5},
	} {
		got, err := decodePageState(s.encode())
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip of %+v gave %+v", s, got)
		}
	}
}

func TestPageStateInvalid(t *testing.T) {
	valid := (&pageState{unit: 1, rows: 2, remaining: -1, key: [][]byte{{1}}}).encode()
	for name, b := range map[string][]byte{
		"empty":            nil,
		"other version":    append([]byte{2}, valid[1:]...),
		"truncated":        valid[:len(valid)-1],
		"trailing bytes":   append(bytes.Clone(valid), 0),
		"negative rows":    {1, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0},
		"remaining below":  {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0, 0, 0},
		"key count beyond": {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1},
	} {
		_, err := decodePageState(b)
		var perr *protocolError
		if !errors.As(err, &perr) || perr.msg != "Invalid value for the paging state" {
			t.Errorf("%s: got %v, want the paging state protocol error", name, err)
		}
	}
}

// FuzzPageState checks that any bytes a client sends as a paging state
// either decode to a state that encodes back to them or are refused.
func FuzzPageState(f *testing.F) {
	f.Add((&pageState{unit: 5, rows: 1, remaining: -1}).encode())
	f.Add((&pageState{unit: -1, rows: 9, remaining: 3, key: [][]byte{{0, 1}, nil}, inPartition: 1}).encode())
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodePageState(b)
		if err != nil {
			return
		}
		if s.rows < 0 || s.inPartition < 0 || s.remaining < -1 {
			t.Fatalf("%x decoded to out-of-range %+v", b, s)
		}
		again, err := decodePageState(s.encode())
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("%x: %+v does not round-trip: %+v %v", b, s, again, err)
		}
	})
}

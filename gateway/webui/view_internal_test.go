package webui

import (
	"testing"

	"github.com/cqlpg/cqlpg/sharding"
)

// TestCompareReplicas checks which replicas the key page marks as
// differing: those outside the largest group of replicas holding the same
// rows, the first such group on a tie.
func TestCompareReplicas(t *testing.T) {
	rows := func(vs ...string) [][][]byte {
		var out [][][]byte
		for _, v := range vs {
			out = append(out, [][]byte{[]byte(v)})
		}
		return out
	}
	tests := []struct {
		name     string
		replicas []keyReplica
		answered int
		agree    bool
		differs  []bool
	}{
		{"all agree", []keyReplica{{rows: rows("a")}, {rows: rows("a")}, {rows: rows("a")}}, 3, true, []bool{false, false, false}},
		{"the first is the odd one out", []keyReplica{{rows: rows("a", "b")}, {rows: rows("a")}, {rows: rows("a")}}, 3, false, []bool{true, false, false}},
		{"a tie goes to the first", []keyReplica{{rows: rows("a")}, {rows: rows("b")}}, 2, false, []bool{false, true}},
		{"one down", []keyReplica{{Err: "down: not asked"}, {rows: rows("a")}, {rows: rows("b")}}, 2, false, []bool{false, false, true}},
		{"none answered", []keyReplica{{Err: "down"}, {Err: "timeout"}}, 0, true, []bool{false, false}},
		{"no rows anywhere", []keyReplica{{}, {rows: rows()}}, 2, true, []bool{false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			answered, agree := compareReplicas(tc.replicas)
			if answered != tc.answered || agree != tc.agree {
				t.Errorf("answered %d, agree %v; want %d, %v", answered, agree, tc.answered, tc.agree)
			}
			for i, r := range tc.replicas {
				if r.Differs != tc.differs[i] {
					t.Errorf("replica %d differs = %v, want %v", i, r.Differs, tc.differs[i])
				}
			}
		})
	}
}

// TestArcPath checks the ring's geometry: the minimum token at the top,
// tokens going clockwise, the large-arc flag past half the ring, and a
// whole-ring range drawn as two halves.
func TestArcPath(t *testing.T) {
	const min, zero, max = sharding.Token(-1 << 63), sharding.Token(0), sharding.Token(1<<63 - 1)
	quarter := sharding.Token(-1 << 62)
	tests := []struct {
		name string
		rg   sharding.Range
		want string
	}{
		// (min, 0]: the right half, from the top down to the bottom.
		{"half", sharding.Range{Start: min, End: zero},
			"M260.00,10.00 A250,250 0 0 1 260.00,510.00L260.00,490.00 A230,230 0 0 0 260.00,30.00Z"},
		// (min, -2^62]: the top right quarter, ending at three o'clock.
		{"quarter", sharding.Range{Start: min, End: quarter},
			"M260.00,10.00 A250,250 0 0 1 510.00,260.00L490.00,260.00 A230,230 0 0 0 260.00,30.00Z"},
		// (-2^62, min] wraps: three quarters, with the large-arc flag.
		{"three quarters", sharding.Range{Start: quarter, End: min},
			"M510.00,260.00 A250,250 0 1 1 260.00,10.00L260.00,30.00 A230,230 0 1 0 490.00,260.00Z"},
		{"whole ring", sharding.Range{Start: max, End: max},
			"M260.00,10.00 A250,250 0 0 1 260.00,510.00L260.00,490.00 A230,230 0 0 0 260.00,30.00Z " +
				"M260.00,510.00 A250,250 0 0 1 260.00,10.00L260.00,30.00 A230,230 0 0 0 260.00,490.00Z"},
	}
	for _, tc := range tests {
		if got := string(appendArcPath(nil, tc.rg, 230, 250)); got != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestHSLHex(t *testing.T) {
	for _, tc := range []struct {
		h, s, l float64
		want    string
	}{{0, 1, .5, "#ff0000"}, {120, 1, .5, "#00ff00"}, {240, 1, .5, "#0000ff"}, {60, 1, .5, "#ffff00"}, {0, 0, 1, "#ffffff"}, {300, .5, .25, "#602060"}} {
		if got := hslHex(tc.h, tc.s, tc.l); got != tc.want {
			t.Errorf("hslHex(%v, %v, %v) = %s, want %s", tc.h, tc.s, tc.l, got, tc.want)
		}
	}
}

package translate

import "testing"

// TestAccumulates marks the updates that applied twice add twice (a list
// append or prepend; counter updates are marked Counter), which a
// replica's refusal of stale SQL must not run again.
func TestAccumulates(t *testing.T) {
	schema, err := goldenSchema()
	if err != nil {
		t.Fatal(err)
	}
	const id = "5b6962dd-3f90-4c93-8f61-eabfa4a803e2"
	for cql, want := range map[string]bool{
		"UPDATE shop.users SET tags = tags + ['a'] WHERE id = " + id:     true,
		"UPDATE shop.users SET tags = ['a'] + tags WHERE id = " + id:     true,
		"UPDATE shop.users SET tags = tags - ['a'] WHERE id = " + id:     false,
		"UPDATE shop.users SET emails = emails + {'a'} WHERE id = " + id: false,
		"UPDATE shop.users SET prefs['a'] = 1 WHERE id = " + id:          false,
		"UPDATE shop.users SET name = 'x' WHERE id = " + id:              false,
	} {
		parsed, err := Parse(cql)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Prepare(parsed, "", schema)
		if err != nil {
			t.Fatalf("%s: %v", cql, err)
		}
		if w := plan.(*Write); w.Counter || w.Accumulates != want {
			t.Errorf("%s: Counter %v, Accumulates %v, want %v", cql, w.Counter, w.Accumulates, want)
		}
	}
}

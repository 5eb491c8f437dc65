package pgschema

// MarkerWinsKey is the number that names the row marker to a table's wins
// function, for the tests.
var MarkerWinsKey = winsKey(markerCell)

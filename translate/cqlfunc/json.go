package cqlfunc

import (
	"encoding/json"

	"github.com/cqlpg/cqlpg/pgschema"
)

// This file holds toJson() and fromJson(), which Cassandra declares for no
// fixed types: toJson() takes whatever the selection gives it and
// fromJson() returns whatever its receiver is. The JSON text forms are
// pgschema's (ToJSON and FromJSON).

// ToJSONFunction is toJson() over values of type t: their JSON text, and
// the text "null" for null.
func ToJSONFunction(t *pgschema.Type) *Function {
	return pureFunction("tojson", scalar(pgschema.Text), []*pgschema.Type{t}, func(a [][]byte) ([]byte, error) {
		if a[0] == nil {
			return []byte("null"), nil
		}
		return pgschema.ToJSON(t, a[0])
	})
}

// FromJSONFunction is fromJson() returning type t: null for null or the
// JSON null, otherwise the JSON text read as a t. Text that does not read
// is a function failure, worded as Cassandra's FunctionExecutionException:
// pgschema's "Could not decode JSON string ..." for text that is not JSON,
// and the MarshalException for JSON that is no value of t.
func FromJSONFunction(t *pgschema.Type) *Function {
	f := &Function{Name: "fromjson", Args: []*pgschema.Type{scalar(pgschema.Text)}, Returns: t, Deterministic: true}
	f.Eval = func(_ *EvalContext, a [][]byte) ([]byte, error) {
		if a[0] == nil || isJSONNull(a[0]) {
			return nil, nil
		}
		v, err := pgschema.FromJSON(t, a[0])
		if err != nil {
			detail := err.Error()
			if json.Valid(a[0]) {
				detail = "org.apache.cassandra.serializers.MarshalException: " + detail
			}
			return nil, &FunctionFailureError{Keyspace: NativeKeyspace, Function: f.Name, ArgTypes: []string{"text"},
				Msg: "execution of '" + f.QualifiedName() + "[text]' failed: " + detail}
		}
		return v, nil
	}
	return f
}

// isJSONNull reports whether a JSON text is the literal null, which
// fromJson() turns into a null value of any type.
func isJSONNull(j []byte) bool {
	i, k := 0, len(j)
	for i < k && isJSONSpace(j[i]) {
		i++
	}
	for k > i && isJSONSpace(j[k-1]) {
		k--
	}
	return string(j[i:k]) == "null"
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

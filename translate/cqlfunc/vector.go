package cqlfunc

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Cassandra 5.0's similarity functions of two float vectors of one
// dimension, as its vector index scores them (Lucene's similarity
// functions): cosine and dot product mapped from [-1, 1] to [0, 1], and
// Euclidean as 1 / (1 + the squared distance).

// Similarity names a similarity function, as the similarity_function
// option of a vector index does.
type Similarity uint8

const (
	Cosine Similarity = iota
	Euclidean
	DotProduct
)

// SimilarityOf reads an index's similarity_function option, in any case.
func SimilarityOf(name string) (Similarity, bool) {
	switch strings.ToLower(name) {
	case "cosine":
		return Cosine, true
	case "euclidean":
		return Euclidean, true
	case "dot_product":
		return DotProduct, true
	}
	return 0, false
}

// Score is the similarity of two vectors of the same dimension.
func (s Similarity) Score(a, b []float32) float32 {
	switch s {
	case Euclidean:
		var d float32
		for i := range a {
			x := a[i] - b[i]
			d += x * x
		}
		return 1 / (1 + d)
	case DotProduct:
		return max((1+dot(a, b))/2, 0)
	}
	var norm1, norm2 float32
	for i := range a {
		norm1 += a[i] * a[i]
		norm2 += b[i] * b[i]
	}
	cos := float32(float64(dot(a, b)) / math.Sqrt(float64(norm1)*float64(norm2)))
	return max((1+cos)/2, 0)
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Floats reads a serialized vector<float, n>.
func Floats(v []byte, dst []float32) []float32 {
	dst = dst[:0]
	for i := 0; i+4 <= len(v); i += 4 {
		dst = append(dst, math.Float32frombits(binary.BigEndian.Uint32(v[i:])))
	}
	return dst
}

func vectorFactories() []*Factory {
	params := []Param{{Text: "any"}, {Text: "same", SameAsFirst: true}}
	build := func(name string, s Similarity) func([]*pgschema.Type) (*Function, error) {
		return func(args []*pgschema.Type) (*Function, error) {
			if len(args) != 2 {
				return nil, invalidf("%s.%s() requires two arguments, but %d given", NativeKeyspace, name, len(args))
			}
			for _, t := range args {
				if t.Kind != pgschema.Vector || t.Elem[0].Kind != pgschema.Float {
					return nil, invalidf("Only float vectors are supported by %s.%s", NativeKeyspace, name)
				}
			}
			if args[0].Dim != args[1].Dim {
				return nil, invalidf("All arguments must have the same vector dimensions")
			}
			return pureFunction(name, scalar(pgschema.Float), args, func(a [][]byte) ([]byte, error) {
				if a[0] == nil || a[1] == nil {
					return nil, nil
				}
				x, y := Floats(a[0], nil), Floats(a[1], nil)
				if len(x) != len(y) {
					return nil, invalidf("All arguments must have the same vector dimensions")
				}
				return binary.BigEndian.AppendUint32(nil, math.Float32bits(s.Score(x, y))), nil
			}), nil
		}
	}
	return []*Factory{
		{Name: "similarity_cosine", Params: params, Build: build("similarity_cosine", Cosine)},
		{Name: "similarity_euclidean", Params: params, Build: build("similarity_euclidean", Euclidean)},
		{Name: "similarity_dot_product", Params: params, Build: build("similarity_dot_product", DotProduct)},
	}
}

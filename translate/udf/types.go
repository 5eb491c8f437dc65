package udf

import "strings"

// Java's static types as the compiler checks them: primitives, classes
// with type arguments, arrays, and the type variables of the method
// signatures the library declares.

// prim is a primitive type, or pRef for a reference type.
type prim uint8

const (
	pRef prim = iota
	pBoolean
	pByte
	pShort
	pChar
	pInt
	pLong
	pFloat
	pDouble
	pVoid
	pNull // the type of the null literal
)

var primNames = [...]string{pRef: "", pBoolean: "boolean", pByte: "byte", pShort: "short", pChar: "char",
	pInt: "int", pLong: "long", pFloat: "float", pDouble: "double", pVoid: "void", pNull: "null"}

// jclass is a class or interface of the library the interpreter provides.
type jclass struct {
	name    string // the simple name messages print ("Integer", "Entry")
	full    string // the binary name exceptions print ("java.lang.Integer")
	params  []string
	supers  []*jtype // direct supertypes, in terms of params
	unboxed prim     // for the box classes, their primitive
	methods map[string][]*method
	ctors   []*method
	fields  map[string]*field
	// refused marks a class outside the subset, which the compiler
	// refuses by name.
	refused bool
}

// jtype is a static type.
type jtype struct {
	prim prim
	cls  *jclass
	args []*jtype // type arguments; nil for a raw type or one without parameters
	elem *jtype   // an array's element type (cls is clsArray)
	tvar string   // a type variable of a signature (E, K, V, T)
}

// The primitive types.
var (
	tBoolean = &jtype{prim: pBoolean}
	tByte    = &jtype{prim: pByte}
	tShort   = &jtype{prim: pShort}
	tChar    = &jtype{prim: pChar}
	tInt     = &jtype{prim: pInt}
	tLong    = &jtype{prim: pLong}
	tFloat   = &jtype{prim: pFloat}
	tDouble  = &jtype{prim: pDouble}
	tVoid    = &jtype{prim: pVoid}
	tNull    = &jtype{prim: pNull}
)

var primTypes = map[string]*jtype{
	"boolean": tBoolean, "byte": tByte, "short": tShort, "char": tChar, "int": tInt,
	"long": tLong, "float": tFloat, "double": tDouble, "void": tVoid,
}

func (t *jtype) isPrim() bool    { return t.prim != pRef && t.prim != pNull }
func (t *jtype) isRef() bool     { return t.prim == pRef || t.prim == pNull }
func (t *jtype) isNumeric() bool { return t.prim >= pByte && t.prim <= pDouble }
func (t *jtype) isIntegral() bool {
	return t.prim >= pByte && t.prim <= pLong
}

// classType returns the type of class c with arguments args.
func classType(c *jclass, args ...*jtype) *jtype {
	if len(args) == 0 {
		args = nil
	}
	return &jtype{cls: c, args: args}
}

// arrayOf returns the array type of elem.
func arrayOf(elem *jtype) *jtype { return &jtype{cls: clsArray, elem: elem} }

// String returns the type as ECJ prints it in messages: simple names with
// type arguments.
func (t *jtype) String() string {
	switch {
	case t == nil:
		return "Object"
	case t.tvar != "":
		return t.tvar
	case t.prim != pRef:
		return primNames[t.prim]
	case t.elem != nil:
		return t.elem.String() + "[]"
	}
	if len(t.args) == 0 {
		return t.cls.name
	}
	parts := make([]string, len(t.args))
	for i, a := range t.args {
		parts[i] = a.String()
	}
	return t.cls.name + "<" + strings.Join(parts, ",") + ">"
}

// same reports whether two types are the same type.
func same(a, b *jtype) bool {
	if a == b {
		return true
	}
	if a == wildObject || b == wildObject {
		return true
	}
	if a == nil || b == nil || a.prim != b.prim || a.cls != b.cls || a.tvar != b.tvar {
		return false
	}
	if a.elem != nil || b.elem != nil {
		return a.elem != nil && b.elem != nil && same(a.elem, b.elem)
	}
	if len(a.args) != len(b.args) {
		return len(a.args) == 0 || len(b.args) == 0 // raw types match any arguments
	}
	for i := range a.args {
		if !same(a.args[i], b.args[i]) {
			return false
		}
	}
	return true
}

// boxOf returns the box class type of a primitive, or t for a reference.
func boxOf(t *jtype) *jtype {
	switch t.prim {
	case pBoolean:
		return typeBoolean
	case pByte:
		return typeByte
	case pShort:
		return typeShort
	case pChar:
		return typeCharacter
	case pInt:
		return typeInteger
	case pLong:
		return typeLong
	case pFloat:
		return typeFloatBox
	case pDouble:
		return typeDoubleBox
	}
	return t
}

// unboxed returns the primitive a box type holds, or nil.
func unboxed(t *jtype) *jtype {
	if t.prim != pRef || t.cls == nil || t.cls.unboxed == pRef {
		return nil
	}
	return primTypeOf(t.cls.unboxed)
}

func primTypeOf(p prim) *jtype {
	return [...]*jtype{pBoolean: tBoolean, pByte: tByte, pShort: tShort, pChar: tChar, pInt: tInt,
		pLong: tLong, pFloat: tFloat, pDouble: tDouble}[p]
}

// numericOf returns the primitive numeric type of t, unboxing, or nil.
func numericOf(t *jtype) *jtype {
	if t.isNumeric() {
		return t
	}
	if u := unboxed(t); u != nil && u.isNumeric() {
		return u
	}
	return nil
}

// booleanOf reports whether t is boolean or Boolean.
func booleanOf(t *jtype) bool {
	return t.prim == pBoolean || t.prim == pRef && t.cls == clsBoolean
}

// widensTo reports whether primitive a widens to primitive b (or is b).
func widensTo(a, b prim) bool {
	if a == b {
		return true
	}
	switch a {
	case pByte:
		return b == pShort || b >= pInt && b <= pDouble
	case pShort, pChar:
		return b >= pInt && b <= pDouble
	case pInt:
		return b >= pLong && b <= pDouble
	case pLong:
		return b == pFloat || b == pDouble
	case pFloat:
		return b == pDouble
	}
	return false
}

// supertypes returns t's direct supertypes with t's arguments substituted.
func supertypes(t *jtype) []*jtype {
	if t.cls == nil {
		return nil
	}
	out := make([]*jtype, 0, len(t.cls.supers))
	for _, s := range t.cls.supers {
		out = append(out, subst(s, t.cls, t.args, nil))
	}
	if len(t.cls.supers) == 0 && t.cls != clsObject {
		out = append(out, typeObject)
	}
	return out
}

// asSuper returns t viewed as class c (List<E> of an ArrayList<E>), or
// nil when c is not a supertype of t.
func asSuper(t *jtype, c *jclass) *jtype {
	if t.cls == c {
		return t
	}
	if t.elem != nil {
		if c == clsObject {
			return typeObject
		}
		return nil
	}
	for _, s := range supertypes(t) {
		if r := asSuper(s, c); r != nil {
			return r
		}
	}
	return nil
}

// subst replaces the type variables of class c (and the method's own, in
// bound) in t by their arguments; a class variable without one becomes
// Object (a raw type's).
func subst(t *jtype, c *jclass, args []*jtype, bound map[string]*jtype) *jtype {
	if t == nil {
		return nil
	}
	if t.tvar != "" {
		if b, ok := bound[t.tvar]; ok {
			return b
		}
		if c != nil {
			for i, p := range c.params {
				if p == t.tvar {
					if i < len(args) {
						return args[i]
					}
					return typeObject
				}
			}
		}
		return t // a method's type variable, still to infer
	}
	if t.elem != nil {
		return arrayOf(subst(t.elem, c, args, bound))
	}
	if len(t.args) == 0 {
		return t
	}
	out := &jtype{cls: t.cls, args: make([]*jtype, len(t.args))}
	for i, a := range t.args {
		out.args[i] = subst(a, c, args, bound)
	}
	return out
}

// isSubtype reports whether a value of type a is a value of reference type
// b: the same class or a subclass, with the same arguments (raw types
// match any).
func isSubtype(a, b *jtype) bool {
	if a.prim == pNull {
		return b.isRef()
	}
	if a.isPrim() || b.isPrim() {
		return a.prim == b.prim
	}
	if b.cls == clsObject && b.elem == nil {
		return true
	}
	if a.elem != nil || b.elem != nil {
		if a.elem == nil || b.elem == nil {
			return false
		}
		if a.elem.isPrim() || b.elem.isPrim() {
			return a.elem.prim == b.elem.prim
		}
		return isSubtype(a.elem, b.elem)
	}
	s := asSuper(a, b.cls)
	if s == nil {
		return false
	}
	if len(s.args) == 0 || len(b.args) == 0 {
		return true
	}
	for i := range b.args {
		if !same(s.args[i], b.args[i]) {
			return false
		}
	}
	return true
}

// wildObject is the argument of a wildcard (List<?>), which matches any
// argument; its values are Objects.
var wildObject = &jtype{}

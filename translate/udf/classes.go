package udf

import (
	"fmt"
	"strings"
)

// The class library: the Java classes bodies may use, declared by name
// with their supertypes, and the names a body may write them by. The
// methods of each are declared in the methods_*.go files, by signature.

// sourceNames maps every name a body may write for a class to it: the
// simple names of java.lang and java.util and of the classes Cassandra's
// generated source imports, and the qualified names of all.
var sourceNames = map[string]*jclass{}

// byName maps class names to classes for the signatures of the library.
var byName = map[string]*jclass{}

// classSupers holds each class's supertypes until init resolves them.
var classSupers = map[*jclass][]string{}

// newClass declares a class by its binary name, with its type parameters
// ("E", "K,V") and supertypes.
func newClass(full, params string, supers ...string) *jclass {
	name := full[strings.LastIndexAny(full, ".$")+1:]
	c := &jclass{name: name, full: full, methods: map[string][]*method{}, fields: map[string]*field{}}
	if params != "" {
		c.params = strings.Split(params, ",")
	}
	byName[name] = c
	classSupers[c] = supers
	src := strings.ReplaceAll(full, "$", ".")
	sourceNames[src] = c
	pkg := full[:strings.LastIndex(full, ".")]
	if (pkg == "java.lang" || pkg == "java.util") && !strings.Contains(full, "$") {
		sourceNames[name] = c
	}
	if pkg == "java.util" && strings.Contains(full, "$") {
		sourceNames[full[len(pkg)+1:strings.Index(full, "$")]+"."+name] = c
	}
	return c
}

// driverClass declares a class of the Java driver Cassandra gives bodies,
// under both package names bodies use for it.
func driverClass(name string, imported bool, supers ...string) *jclass {
	c := newClass("org.apache.cassandra.cql3.functions.types."+name, "", supers...)
	sourceNames["com.datastax.driver.core."+name] = c
	if imported {
		sourceNames[name] = c
	}
	return c
}

// The classes.
var (
	clsObject       = newClass("java.lang.Object", "")
	clsCharSequence = newClass("java.lang.CharSequence", "")
	clsString       = newClass("java.lang.String", "", "CharSequence")
	clsNumber       = newClass("java.lang.Number", "")
	clsInteger      = newClass("java.lang.Integer", "", "Number")
	clsLong         = newClass("java.lang.Long", "", "Number")
	clsShort        = newClass("java.lang.Short", "", "Number")
	clsByte         = newClass("java.lang.Byte", "", "Number")
	clsFloat        = newClass("java.lang.Float", "", "Number")
	clsDouble       = newClass("java.lang.Double", "", "Number")
	clsCharacter    = newClass("java.lang.Character", "")
	clsBoolean      = newClass("java.lang.Boolean", "")
	clsMath         = newClass("java.lang.Math", "")
	clsStrictMath   = newClass("java.lang.StrictMath", "")
	clsSystem       = newClass("java.lang.System", "")
	clsBuilder      = newClass("java.lang.StringBuilder", "", "CharSequence")
	clsBuffer       = newClass("java.lang.StringBuffer", "", "CharSequence")
	clsClass        = newClass("java.lang.Class", "T")
	clsIterable     = newClass("java.lang.Iterable", "T")

	clsCollection    = newClass("java.util.Collection", "E", "Iterable<E>")
	clsList          = newClass("java.util.List", "E", "Collection<E>")
	clsArrayList     = newClass("java.util.ArrayList", "E", "List<E>")
	clsLinkedList    = newClass("java.util.LinkedList", "E", "List<E>")
	clsSet           = newClass("java.util.Set", "E", "Collection<E>")
	clsHashSet       = newClass("java.util.HashSet", "E", "Set<E>")
	clsLinkedHashSet = newClass("java.util.LinkedHashSet", "E", "HashSet<E>")
	clsSortedSet     = newClass("java.util.SortedSet", "E", "Set<E>")
	clsNavigableSet  = newClass("java.util.NavigableSet", "E", "SortedSet<E>")
	clsTreeSet       = newClass("java.util.TreeSet", "E", "NavigableSet<E>")
	clsMap           = newClass("java.util.Map", "K,V")
	clsHashMap       = newClass("java.util.HashMap", "K,V", "Map<K,V>")
	clsLinkedHashMap = newClass("java.util.LinkedHashMap", "K,V", "HashMap<K,V>")
	clsSortedMap     = newClass("java.util.SortedMap", "K,V", "Map<K,V>")
	clsNavigableMap  = newClass("java.util.NavigableMap", "K,V", "SortedMap<K,V>")
	clsTreeMap       = newClass("java.util.TreeMap", "K,V", "NavigableMap<K,V>")
	clsEntry         = newClass("java.util.Map$Entry", "K,V")
	clsIterator      = newClass("java.util.Iterator", "E")
	clsCollections   = newClass("java.util.Collections", "")
	clsArrays        = newClass("java.util.Arrays", "")
	clsObjects       = newClass("java.util.Objects", "")
	clsUUID          = newClass("java.util.UUID", "")
	clsDate          = newClass("java.util.Date", "")
	clsRandom        = newClass("java.util.Random", "")

	clsBigDecimal   = newClass("java.math.BigDecimal", "", "Number")
	clsBigInteger   = newClass("java.math.BigInteger", "", "Number")
	clsRoundingMode = newClass("java.math.RoundingMode", "")
	clsInetAddress  = newClass("java.net.InetAddress", "")
	clsByteBuffer   = newClass("java.nio.ByteBuffer", "")

	clsTupleValue = driverClass("TupleValue", true)
	clsUDTValue   = driverClass("UDTValue", true)
	clsLocalDate  = driverClass("LocalDate", false)
	clsDuration   = driverClass("Duration", false)
	clsUDFContext = newClass("org.apache.cassandra.cql3.functions.UDFContext", "")

	// clsArray is the class of arrays, whose only member is length.
	clsArray = &jclass{name: "array", full: "array", methods: map[string][]*method{}, fields: map[string]*field{}}
)

// The exceptions bodies can meet, throw and catch.
var (
	clsThrowable        = newClass("java.lang.Throwable", "")
	clsException        = newClass("java.lang.Exception", "", "Throwable")
	clsError            = newClass("java.lang.Error", "", "Throwable")
	clsRuntimeException = newClass("java.lang.RuntimeException", "", "Exception")
	clsArithmetic       = newClass("java.lang.ArithmeticException", "", "RuntimeException")
	clsNPE              = newClass("java.lang.NullPointerException", "", "RuntimeException")
	clsIllegalArgument  = newClass("java.lang.IllegalArgumentException", "", "RuntimeException")
	clsNumberFormat     = newClass("java.lang.NumberFormatException", "", "IllegalArgumentException")
	clsIllegalState     = newClass("java.lang.IllegalStateException", "", "RuntimeException")
	clsIndexOutOfBounds = newClass("java.lang.IndexOutOfBoundsException", "", "RuntimeException")
	clsArrayIndex       = newClass("java.lang.ArrayIndexOutOfBoundsException", "", "IndexOutOfBoundsException")
	clsStringIndex      = newClass("java.lang.StringIndexOutOfBoundsException", "", "IndexOutOfBoundsException")
	clsNegativeArray    = newClass("java.lang.NegativeArraySizeException", "", "RuntimeException")
	clsClassCast        = newClass("java.lang.ClassCastException", "", "RuntimeException")
	clsUnsupported      = newClass("java.lang.UnsupportedOperationException", "", "RuntimeException")
	clsConcurrentMod    = newClass("java.util.ConcurrentModificationException", "", "RuntimeException")
	clsNoSuchElement    = newClass("java.util.NoSuchElementException", "", "RuntimeException")
	clsIllegalFormat    = newClass("java.util.IllegalFormatException", "", "IllegalArgumentException")
	clsOutOfMemory      = newClass("java.lang.OutOfMemoryError", "", "Error")
	clsDriverException  = newClass("org.apache.cassandra.cql3.functions.types.exceptions.DriverException", "", "RuntimeException")
	clsCodecNotFound    = newClass("org.apache.cassandra.cql3.functions.types.exceptions.CodecNotFoundException", "", "DriverException")
	clsInvalidType      = newClass("org.apache.cassandra.cql3.functions.types.exceptions.InvalidTypeException", "", "DriverException")
)

// refusedClasses are classes of java.lang and java.util a body could name
// by their simple names that the interpreter refuses by name: threads,
// processes and reflection, which Cassandra forbids too, and the classes
// the interpreter does not provide.
var refusedClasses = []string{
	"Thread", "ThreadGroup", "ThreadLocal", "InheritableThreadLocal", "Runnable", "Runtime",
	"Process", "ProcessBuilder", "ProcessHandle", "ClassLoader", "Package", "Compiler",
	"SecurityManager", "Module", "ModuleLayer", "StackWalker", "Shutdown", "Enum", "Record",
	"Comparable", "Cloneable", "AutoCloseable", "Appendable", "Readable", "Void", "StackTraceElement",
	"Optional", "OptionalInt", "OptionalLong", "OptionalDouble", "Comparator", "StringJoiner",
	"Scanner", "Calendar", "GregorianCalendar", "SimpleTimeZone", "Locale", "Formatter",
	"Base64", "BitSet", "Deque", "ArrayDeque", "Queue", "PriorityQueue", "Stack", "Vector",
	"Hashtable", "Properties", "EnumMap", "EnumSet", "WeakHashMap", "IdentityHashMap", "ListIterator",
	"StringTokenizer", "Currency", "Spliterator", "Enumeration", "Observable", "Observer",
	"ServiceLoader", "Timer", "TimerTask", "AbstractList", "AbstractMap", "AbstractSet",
	"AbstractCollection", "SequencedCollection",
}

// Frequently used types.
var (
	typeObject    = classType(clsObject)
	typeString    = classType(clsString)
	typeInteger   = classType(clsInteger)
	typeLong      = classType(clsLong)
	typeShort     = classType(clsShort)
	typeByte      = classType(clsByte)
	typeFloatBox  = classType(clsFloat)
	typeDoubleBox = classType(clsDouble)
	typeCharacter = classType(clsCharacter)
	typeBoolean   = classType(clsBoolean)
	typeThrowable = classType(clsThrowable)
)

func init() {
	clsInteger.unboxed, clsLong.unboxed, clsShort.unboxed, clsByte.unboxed = pInt, pLong, pShort, pByte
	clsFloat.unboxed, clsDouble.unboxed, clsCharacter.unboxed, clsBoolean.unboxed = pFloat, pDouble, pChar, pBoolean
	wildObject.cls = clsObject
	for c, supers := range classSupers {
		for _, s := range supers {
			c.supers = append(c.supers, sigType(s, c.params))
		}
	}
	for _, name := range refusedClasses {
		c := &jclass{name: name, full: name, refused: true}
		sourceNames[name] = c
		sourceNames["java.lang."+name] = c
		sourceNames["java.util."+name] = c
	}
	declareLang()
	declareMath()
	declareStrings()
	declareCollections()
	declareMaps()
	declareBig()
	declareDriver()
	declareMisc()
	declareText()
	declareExceptions()
}

// field is a static field of a class: a constant.
type field struct {
	t *jtype
	v val
	// constant is the field's value as a compile-time constant, or nil.
	constant any
}

// constField declares a static final field.
func constField(c *jclass, name, typ string, v val, constant any) {
	c.fields[name] = &field{t: sigType(typ, nil), v: v, constant: constant}
}

// sigType parses a type of a library signature: a primitive, a class
// with type arguments, an array, or one of the type variables in scope.
func sigType(s string, tvars []string) *jtype {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "[]") {
		return arrayOf(sigType(s[:len(s)-2], tvars))
	}
	if t, ok := primTypes[s]; ok {
		return t
	}
	for _, v := range tvars {
		if s == v {
			return &jtype{tvar: v}
		}
	}
	if s == "?" {
		return wildObject
	}
	name, args := s, ""
	if i := strings.IndexByte(s, '<'); i >= 0 {
		name, args = s[:i], s[i+1:len(s)-1]
	}
	c := byName[name]
	if c == nil {
		panic(fmt.Sprintf("udf: unknown class %q in a library signature", name))
	}
	t := &jtype{cls: c}
	for _, a := range splitTop(args) {
		t.args = append(t.args, sigType(a, tvars))
	}
	return t
}

// splitTop splits s at the commas outside angle brackets.
func splitTop(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

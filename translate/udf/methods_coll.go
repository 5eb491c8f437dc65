package udf

import "slices"

// java.util's collections: Collection and List, the Set classes and
// Iterator.

// jiter is an Iterator over a snapshot of a collection's elements, which
// fails fast, as Java's do, when the collection changes other than
// through it.
type jiter struct {
	src   val
	elems []val
	i     int
	mod   int
	last  int // the index of the element next returned last, -1 when remove may not be called
	// removed counts the elements removed through the iterator, which
	// shift a list's later elements.
	removed int
}

// modOf is a collection's modification count: for a view of a map
// (keySet, values, entrySet), the map's, so that iterating a view fails
// fast when the map changes, as in Java.
func modOf(v val) int {
	switch r := v.r.(type) {
	case *jlist:
		if r.of != nil {
			return r.of.mod
		}
		return r.mod
	case *jmap:
		if r.of != nil {
			return r.of.mod
		}
		return r.mod
	}
	return 0
}

// collSize is Collection.size.
func collSize(v val) int {
	switch r := v.r.(type) {
	case *jlist:
		return len(r.elems)
	case *jmap:
		return r.size()
	}
	return len(elements(v))
}

// contains is Collection.contains.
func contains(fr *frame, v, x val) bool {
	if m, ok := v.r.(*jmap); ok && m.set {
		return m.get(x) != nil
	}
	for _, e := range elements(v) {
		fr.work(1)
		if javaEquals(x, e) {
			return true
		}
	}
	return false
}

// collAdd is Collection.add.
func collAdd(fr *frame, v, x val) bool {
	switch r := v.r.(type) {
	case *jlist:
		r.change()
		fr.alloc(valSize)
		r.elems = append(r.elems, x)
		return true
	case *jmap:
		_, had := r.put(fr, x, null)
		return !had
	}
	throwBare(clsUnsupported)
	return false
}

// collRemove is Collection.remove(Object).
func collRemove(fr *frame, v, x val) bool {
	switch r := v.r.(type) {
	case *jlist:
		for i, e := range r.elems {
			fr.work(1)
			if javaEquals(x, e) {
				r.change()
				r.elems = slices.Delete(r.elems, i, i+1)
				return true
			}
		}
		return false
	case *jmap:
		_, had := r.remove(x)
		return had
	}
	throwBare(clsUnsupported)
	return false
}

// listOf makes a list of class cls holding elems.
func listOf(fr *frame, cls *jclass, elems []val, fixed uint8) val {
	fr.alloc(valSize * len(elems))
	return refval(&jlist{cls: cls, elems: slices.Clone(elems), fixed: fixed})
}

// setOf makes a set of class cls holding elems.
func setOf(fr *frame, cls *jclass, elems []val) *jmap {
	s := newMap(cls, true)
	if s.order == hashOrder {
		s.presize(max(int(float32(len(elems))/0.75)+1, 16))
	}
	for _, e := range elems {
		s.put(fr, e, null)
	}
	return s
}

// listIndex checks a list index as ArrayList does.
func listIndex(l *jlist, i int32, size int) int {
	if i < 0 || int(i) >= size {
		indexOutOfBounds(clsIndexOutOfBounds, int(i), size)
	}
	return int(i)
}

func declareCollections() {
	c := clsCollection
	def(c, "int size()", func(_ *frame, r val, _ []val) val { return ival(int32(collSize(r))) })
	def(c, "boolean isEmpty()", func(_ *frame, r val, _ []val) val { return zval(collSize(r) == 0) })
	def(c, "boolean contains(Object)", func(fr *frame, r val, a []val) val { return zval(contains(fr, r, a[0])) })
	def(c, "boolean add(E)", func(fr *frame, r val, a []val) val { return zval(collAdd(fr, r, a[0])) })
	def(c, "boolean remove(Object)", func(fr *frame, r val, a []val) val { return zval(collRemove(fr, r, a[0])) })
	def(c, "boolean addAll(Collection<?>)", func(fr *frame, r val, a []val) val {
		changed := false
		for _, e := range slices.Clone(elements(a[0])) {
			changed = collAdd(fr, r, e) || changed
		}
		return zval(changed)
	})
	def(c, "boolean containsAll(Collection<?>)", func(fr *frame, r val, a []val) val {
		for _, e := range elements(a[0]) {
			if !contains(fr, r, e) {
				return zval(false)
			}
		}
		return zval(true)
	})
	removeIf := func(fr *frame, r val, drop func(val) bool) bool {
		changed := false
		for _, e := range slices.Clone(elements(r)) {
			if drop(e) {
				collRemove(fr, r, e)
				changed = true
			}
		}
		return changed
	}
	def(c, "boolean removeAll(Collection<?>)", func(fr *frame, r val, a []val) val {
		other := a[0]
		elements(other)
		return zval(removeIf(fr, r, func(e val) bool { return contains(fr, other, e) }))
	})
	def(c, "boolean retainAll(Collection<?>)", func(fr *frame, r val, a []val) val {
		other := a[0]
		elements(other)
		return zval(removeIf(fr, r, func(e val) bool { return !contains(fr, other, e) }))
	})
	def(c, "void clear()", func(_ *frame, r val, _ []val) val {
		switch x := r.r.(type) {
		case *jlist:
			x.change()
			x.elems = x.elems[:0]
		case *jmap:
			x.clear()
		}
		return null
	})
	def(c, "Object[] toArray()", func(fr *frame, r val, _ []val) val {
		es := elements(r)
		fr.alloc(valSize * len(es))
		return refval(&jarray{elem: typeObject, vals: slices.Clone(es)})
	})
	def(clsIterable, "Iterator<T> iterator()", func(_ *frame, r val, _ []val) val {
		return refval(&jiter{src: r, elems: slices.Clone(elements(r)), mod: modOf(r), last: -1})
	})
	declareIterator()
	declareList()
	declareSets()
	declareCollectionsClass()
	declareArrays()
}

func declareIterator() {
	c := clsIterator
	get := func(r val) *jiter { return r.r.(*jiter) }
	def(c, "boolean hasNext()", func(_ *frame, r val, _ []val) val { it := get(r); return zval(it.i < len(it.elems)) })
	def(c, "E next()", func(_ *frame, r val, _ []val) val {
		it := get(r)
		if modOf(it.src) != it.mod {
			throwBare(clsConcurrentMod)
		}
		if it.i >= len(it.elems) {
			throwBare(clsNoSuchElement)
		}
		it.last = it.i
		it.i++
		return it.elems[it.last]
	})
	def(c, "void remove()", func(_ *frame, r val, _ []val) val {
		it := get(r)
		if it.last < 0 {
			throwBare(clsIllegalState)
		}
		if modOf(it.src) != it.mod {
			throwBare(clsConcurrentMod)
		}
		switch s := it.src.r.(type) {
		case *jlist:
			s.change()
			i := it.last - it.removed
			s.elems = slices.Delete(s.elems, i, i+1)
			it.removed++
		case *jmap:
			x := it.elems[it.last]
			if !s.set {
				x = x.r.(*entry).k
			}
			s.remove(x)
		default:
			throwBare(clsUnsupported)
		}
		it.mod = modOf(it.src)
		it.last = -1
		return null
	})
}

func declareList() {
	c := clsList
	get := func(r val) *jlist { return r.r.(*jlist) }
	def(c, "E get(int)", func(_ *frame, r val, a []val) val {
		l := get(r)
		return l.elems[listIndex(l, a[0].i(), len(l.elems))]
	})
	def(c, "E set(int,E)", func(_ *frame, r val, a []val) val {
		l := get(r)
		if l.fixed == immutable {
			throwBare(clsUnsupported)
		}
		i := listIndex(l, a[0].i(), len(l.elems))
		old := l.elems[i]
		l.elems[i] = a[1]
		return old
	})
	def(c, "void add(int,E)", func(fr *frame, r val, a []val) val {
		l := get(r)
		l.change()
		i := a[0].i()
		if i < 0 || int(i) > len(l.elems) {
			indexOutOfBounds(clsIndexOutOfBounds, int(i), len(l.elems))
		}
		fr.alloc(valSize)
		l.elems = slices.Insert(l.elems, int(i), a[1])
		return null
	})
	def(c, "E remove(int)", func(_ *frame, r val, a []val) val {
		l := get(r)
		l.change()
		i := listIndex(l, a[0].i(), len(l.elems))
		old := l.elems[i]
		l.elems = slices.Delete(l.elems, i, i+1)
		return old
	})
	def(c, "boolean addAll(int,Collection<?>)", func(fr *frame, r val, a []val) val {
		l := get(r)
		l.change()
		i := a[0].i()
		if i < 0 || int(i) > len(l.elems) {
			indexOutOfBounds(clsIndexOutOfBounds, int(i), len(l.elems))
		}
		es := slices.Clone(elements(a[1]))
		fr.alloc(valSize * len(es))
		l.elems = slices.Insert(l.elems, int(i), es...)
		return zval(len(es) > 0)
	})
	find := func(fr *frame, l *jlist, x val, last bool) int {
		for k := range l.elems {
			fr.work(1)
			i := k
			if last {
				i = len(l.elems) - 1 - k
			}
			if javaEquals(x, l.elems[i]) {
				return i
			}
		}
		return -1
	}
	def(c, "int indexOf(Object)", func(fr *frame, r val, a []val) val { return ival(int32(find(fr, get(r), a[0], false))) })
	def(c, "int lastIndexOf(Object)", func(fr *frame, r val, a []val) val {
		return ival(int32(find(fr, get(r), a[0], true)))
	})
	def(c, "List<E> subList(int,int)", func(fr *frame, r val, a []val) val {
		l := get(r)
		b, e := int(a[0].i()), int(a[1].i())
		switch {
		case b < 0:
			throw(clsIndexOutOfBounds, "fromIndex = %d", b)
		case e > len(l.elems):
			throw(clsIndexOutOfBounds, "toIndex = %d", e)
		case b > e:
			throw(clsIllegalArgument, "fromIndex(%d) > toIndex(%d)", b, e)
		}
		return listOf(fr, clsArrayList, l.elems[b:e], mutable)
	})
	def(c, "static <T> List<T> of(T...)", func(fr *frame, _ val, a []val) val {
		es := elements(a[0])
		for _, e := range es {
			if e.r == nil {
				npe()
			}
		}
		return listOf(fr, clsList, es, immutable)
	})
	def(c, "static <T> List<T> copyOf(Collection<T>)", func(fr *frame, _ val, a []val) val {
		return listOf(fr, clsList, elements(a[0]), immutable)
	})
	for _, lc := range []*jclass{clsArrayList, clsLinkedList} {
		lc := lc
		ctor(lc, "()", func(*frame, val, []val) val { return refval(newList(lc, 0)) })
		ctor(lc, "(Collection<E>)", func(fr *frame, _ val, a []val) val {
			return listOf(fr, lc, elements(a[0]), mutable)
		})
	}
	ctor(clsArrayList, "(int)", func(_ *frame, _ val, a []val) val {
		if a[0].i() < 0 {
			throw(clsIllegalArgument, "Illegal Capacity: %d", a[0].i())
		}
		return refval(newList(clsArrayList, 0))
	})
	ll := clsLinkedList
	ends := func(name string, first, remove bool) {
		def(ll, "E "+name+"()", func(_ *frame, r val, _ []val) val {
			l := get(r)
			if len(l.elems) == 0 {
				throwBare(clsNoSuchElement)
			}
			i := len(l.elems) - 1
			if first {
				i = 0
			}
			v := l.elems[i]
			if remove {
				l.change()
				l.elems = slices.Delete(l.elems, i, i+1)
			}
			return v
		})
	}
	ends("getFirst", true, false)
	ends("getLast", false, false)
	ends("removeFirst", true, true)
	ends("removeLast", false, true)
	def(ll, "void addFirst(E)", func(fr *frame, r val, a []val) val {
		l := get(r)
		l.change()
		fr.alloc(valSize)
		l.elems = slices.Insert(l.elems, 0, a[0])
		return null
	})
	def(ll, "void addLast(E)", func(fr *frame, r val, a []val) val { collAdd(fr, r, a[0]); return null })
}

func declareSets() {
	for _, sc := range []*jclass{clsHashSet, clsLinkedHashSet, clsTreeSet} {
		sc := sc
		ctor(sc, "()", func(*frame, val, []val) val { return refval(newMap(sc, true)) })
		ctor(sc, "(Collection<E>)", func(fr *frame, _ val, a []val) val { return refval(setOf(fr, sc, elements(a[0]))) })
		if sc != clsTreeSet {
			ctor(sc, "(int)", func(_ *frame, _ val, a []val) val {
				if a[0].i() < 0 {
					throw(clsIllegalArgument, "Illegal initial capacity: %d", a[0].i())
				}
				s := newMap(sc, true)
				s.presize(int(a[0].i()))
				return refval(s)
			})
		}
	}
	def(clsSet, "static <T> Set<T> of(T...)", func(fr *frame, _ val, a []val) val {
		s := newMap(clsLinkedHashSet, true)
		for _, e := range elements(a[0]) {
			if e.r == nil {
				npe()
			}
			if _, dup := s.put(fr, e, null); dup {
				throw(clsIllegalArgument, "duplicate element: %s", toJavaString(fr, e))
			}
		}
		s.cls, s.fixed = clsSet, immutable
		return refval(s)
	})
	def(clsSet, "static <T> Set<T> copyOf(Collection<T>)", func(fr *frame, _ val, a []val) val {
		s := setOf(fr, clsLinkedHashSet, elements(a[0]))
		s.cls, s.fixed = clsSet, immutable
		return refval(s)
	})
	ts := clsSortedSet
	get := func(r val) *jmap { return r.r.(*jmap) }
	endOf := func(r val, first, remove bool) val {
		es := get(r).entries()
		if len(es) == 0 {
			if remove {
				return null
			}
			throwBare(clsNoSuchElement)
		}
		e := es[len(es)-1]
		if first {
			e = es[0]
		}
		if remove {
			get(r).remove(e.k)
		}
		return e.k
	}
	def(ts, "E first()", func(_ *frame, r val, _ []val) val { return endOf(r, true, false) })
	def(ts, "E last()", func(_ *frame, r val, _ []val) val { return endOf(r, false, false) })
	def(clsNavigableSet, "E pollFirst()", func(_ *frame, r val, _ []val) val { return endOf(r, true, true) })
	def(clsNavigableSet, "E pollLast()", func(_ *frame, r val, _ []val) val { return endOf(r, false, true) })
	near := func(name string, pick func(c int, inclusive bool) bool, inclusive, fromTop bool) {
		def(clsNavigableSet, "E "+name+"(E)", func(_ *frame, r val, a []val) val {
			es := get(r).entries()
			for k := range es {
				i := k
				if fromTop {
					i = len(es) - 1 - k
				}
				if pick(javaCompare(es[i].k, a[0]), inclusive) {
					return es[i].k
				}
			}
			return null
		})
	}
	above := func(c int, incl bool) bool { return c > 0 || incl && c == 0 }
	below := func(c int, incl bool) bool { return c < 0 || incl && c == 0 }
	near("ceiling", above, true, false)
	near("higher", above, false, false)
	near("floor", below, true, true)
	near("lower", below, false, true)
}

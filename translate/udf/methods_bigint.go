package udf

import "math/big"

// java.math.BigInteger.

func declareBigInteger() {
	c := clsBigInteger
	bi := func(n *big.Int) val { return refval(n) }
	arg := func(v val) *big.Int {
		if v.r == nil {
			npe()
		}
		return bigOf(v)
	}
	for name, n := range map[string]int64{"ZERO": 0, "ONE": 1, "TWO": 2, "TEN": 10} {
		c.fields[name] = &field{t: classType(c), v: bi(big.NewInt(n))}
	}
	def(c, "static BigInteger valueOf(long)", func(_ *frame, _ val, a []val) val { return bi(big.NewInt(a[0].j())) })
	ctor(c, "(String)", func(_ *frame, _ val, a []val) val { return bi(parseBigInteger(a[0], 10)) })
	ctor(c, "(String,int)", func(_ *frame, _ val, a []val) val { return bi(parseBigInteger(a[0], int(a[1].i()))) })
	binary := map[string]func(fr *frame, x, y *big.Int) *big.Int{
		"add":      func(fr *frame, x, y *big.Int) *big.Int { return new(big.Int).Add(x, y) },
		"subtract": func(fr *frame, x, y *big.Int) *big.Int { return new(big.Int).Sub(x, y) },
		"multiply": func(fr *frame, x, y *big.Int) *big.Int {
			bigBits(fr, int64(x.BitLen()+y.BitLen()))
			return new(big.Int).Mul(x, y)
		},
		"divide": func(fr *frame, x, y *big.Int) *big.Int {
			if y.Sign() == 0 {
				throw(clsArithmetic, "BigInteger divide by zero")
			}
			return new(big.Int).Quo(x, y)
		},
		"remainder": func(fr *frame, x, y *big.Int) *big.Int {
			if y.Sign() == 0 {
				throw(clsArithmetic, "BigInteger divide by zero")
			}
			return new(big.Int).Rem(x, y)
		},
		"mod": func(fr *frame, x, y *big.Int) *big.Int {
			if y.Sign() <= 0 {
				throw(clsArithmetic, "BigInteger: modulus not positive")
			}
			return new(big.Int).Mod(x, y)
		},
		"gcd": func(fr *frame, x, y *big.Int) *big.Int {
			return new(big.Int).GCD(nil, nil, new(big.Int).Abs(x), new(big.Int).Abs(y))
		},
		"max": func(fr *frame, x, y *big.Int) *big.Int {
			if x.Cmp(y) >= 0 {
				return x
			}
			return y
		},
		"min": func(fr *frame, x, y *big.Int) *big.Int {
			if x.Cmp(y) <= 0 {
				return x
			}
			return y
		},
		"and": func(fr *frame, x, y *big.Int) *big.Int { return new(big.Int).And(x, y) },
		"or":  func(fr *frame, x, y *big.Int) *big.Int { return new(big.Int).Or(x, y) },
		"xor": func(fr *frame, x, y *big.Int) *big.Int { return new(big.Int).Xor(x, y) },
	}
	for name, f := range binary {
		def(c, "BigInteger "+name+"(BigInteger)", func(fr *frame, r val, a []val) val { return bi(f(fr, bigOf(r), arg(a[0]))) })
	}
	def(c, "BigInteger pow(int)", func(fr *frame, r val, a []val) val {
		n := a[0].i()
		if n < 0 {
			throw(clsArithmetic, "Negative exponent")
		}
		bigBits(fr, int64(bigOf(r).BitLen())*int64(n))
		return bi(new(big.Int).Exp(bigOf(r), big.NewInt(int64(n)), nil))
	})
	def(c, "BigInteger shiftLeft(int)", func(fr *frame, r val, a []val) val {
		n := int(a[0].i())
		if n < 0 {
			return bi(new(big.Int).Rsh(bigOf(r), uint(-n)))
		}
		bigBits(fr, int64(bigOf(r).BitLen())+int64(n))
		return bi(new(big.Int).Lsh(bigOf(r), uint(n)))
	})
	def(c, "BigInteger shiftRight(int)", func(fr *frame, r val, a []val) val {
		n := int(a[0].i())
		if n < 0 {
			bigBits(fr, int64(bigOf(r).BitLen())-int64(n))
			return bi(new(big.Int).Lsh(bigOf(r), uint(-n)))
		}
		return bi(new(big.Int).Rsh(bigOf(r), uint(n)))
	})
	def(c, "BigInteger negate()", func(_ *frame, r val, _ []val) val { return bi(new(big.Int).Neg(bigOf(r))) })
	def(c, "BigInteger abs()", func(_ *frame, r val, _ []val) val { return bi(new(big.Int).Abs(bigOf(r))) })
	def(c, "int signum()", func(_ *frame, r val, _ []val) val { return ival(int32(bigOf(r).Sign())) })
	def(c, "int bitLength()", func(_ *frame, r val, _ []val) val {
		n := bigOf(r)
		if n.Sign() < 0 {
			return ival(int32(new(big.Int).Not(n).BitLen()))
		}
		return ival(int32(n.BitLen()))
	})
	def(c, "boolean testBit(int)", func(_ *frame, r val, a []val) val {
		if a[0].i() < 0 {
			throw(clsArithmetic, "Negative bit address")
		}
		return zval(bigOf(r).Bit(int(a[0].i())) == 1)
	})
	def(c, "int compareTo(BigInteger)", func(_ *frame, r val, a []val) val { return ival(int32(bigOf(r).Cmp(arg(a[0])))) })
	def(c, "String toString(int)", func(_ *frame, r val, a []val) val {
		return strval(bigOf(r).Text(int(radixOr10(a[0].i()))))
	})
	def(c, "long longValueExact()", func(_ *frame, r val, _ []val) val {
		if !bigOf(r).IsInt64() {
			throw(clsArithmetic, "BigInteger out of long range")
		}
		return jval(bigOf(r).Int64())
	})
	def(c, "int intValueExact()", func(_ *frame, r val, _ []val) val {
		n := bigOf(r)
		if !n.IsInt64() || n.Int64() != int64(int32(n.Int64())) {
			throw(clsArithmetic, "BigInteger out of int range")
		}
		return ival(int32(n.Int64()))
	})
}

func radixOr10(r int32) int32 {
	if r < 2 || r > 36 {
		return 10
	}
	return r
}

/// Arithmetic in GF(256) with the Rijndael polynomial x⁸ + x⁴ + x³ + x + 1, as SLIP-0039's
/// Shamir sharing uses it ("Shamir's secret-sharing"). Share values are secret, so
/// multiplication runs the same eight steps with masks whatever its operands are: no branch and
/// no table look-up depends on a secret byte. The x coordinates (share indexes) are public.
enum GF256 {
    /// The product of `a` and `b` (shift-and-add, reducing by the polynomial with a mask).
    @inline(__always)
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var a = a, b = b, product: UInt8 = 0
        for _ in 0..<8 {
            product ^= a & (0 &- (b & 1))
            let carry = 0 &- (a >> 7)
            a = (a << 1) ^ (0x1b & carry)
            b >>= 1
        }
        return product
    }

    /// The inverse of a non-zero `a`: a²⁵⁴, by a fixed sequence of squarings and products.
    static func inverse(_ a: UInt8) -> UInt8 {
        precondition(a != 0, "zero has no inverse")
        var result: UInt8 = 1, square = a
        for _ in 0..<7 {  // 254 = 0b11111110: every bit but the lowest
            square = multiply(square, square)
            result = multiply(result, square)
        }
        return result
    }

    /// The value at `x` of the polynomials of lowest degree through `points` (one polynomial per
    /// byte position, as SLIP-0039's Interpolate). Every point's vector has the same length and
    /// the x values are distinct; `output` receives the result.
    static func interpolate(at x: UInt8, _ points: [(x: UInt8, y: UnsafeRawBufferPointer)], into output: UnsafeMutableRawBufferPointer) {
        for index in output.indices { output[index] = 0 }
        for (i, point) in points.enumerated() {
            precondition(point.y.count == output.count)
            // The Lagrange basis polynomial of point i at x, from public coordinates only.
            var numerator: UInt8 = 1, denominator: UInt8 = 1
            for (j, other) in points.enumerated() where j != i {
                numerator = multiply(numerator, x ^ other.x)
                denominator = multiply(denominator, point.x ^ other.x)
            }
            let basis = multiply(numerator, inverse(denominator))
            for index in output.indices {
                output[index] ^= multiply(point.y[index], basis)
            }
        }
    }
}

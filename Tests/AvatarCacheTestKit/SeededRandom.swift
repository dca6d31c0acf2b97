/// A small deterministic generator, so fuzz inputs are the same on every run.
package struct SeededRandom: RandomNumberGenerator {
    package var state: UInt64
    package init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    package mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
    package mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
    package mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}

import AvatarCacheSupport
import Foundation

/// A pull reader over raw JSON bytes, one value at a time, for the fast path of the export
/// readers (a plain users-export record read without JSONDecoder). Small on purpose: no
/// tree, no Any, one pass. Every reading method returns nil (or false) at anything it
/// does not expect; the caller then gives up on the fast path.
struct JSONBytesReader {
    private let base: UnsafePointer<UInt8>
    private let end: Int
    private(set) var position = 0

    init(_ buffer: UnsafeRawBufferPointer) {
        let bytes = buffer.bindMemory(to: UInt8.self)
        base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
        end = bytes.count
    }

    var atEnd: Bool {
        mutating get { skipSpace(); return position == end }
    }

    private mutating func skipSpace() {
        while position < end {
            switch base[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        skipSpace()
        guard position < end, base[position] == byte else { return false }
        position += 1
        return true
    }

    /// `null`, consumed; false (nothing consumed) for anything else.
    mutating func null() -> Bool {
        skipSpace()
        guard end - position >= 4, base[position] == UInt8(ascii: "n"), base[position + 1] == UInt8(ascii: "u"),
              base[position + 2] == UInt8(ascii: "l"), base[position + 3] == UInt8(ascii: "l") else { return false }
        position += 4
        return true
    }

    /// The raw bytes of a string without escapes, and whether they are all ASCII; nil
    /// (nothing consumed) when it has escapes.
    private mutating func plainString() -> (bytes: UnsafeBufferPointer<UInt8>, ascii: Bool)? {
        skipSpace()
        guard position < end, base[position] == 0x22 else { return nil }
        var index = position + 1
        var high: UInt8 = 0
        while index < end {
            let byte = base[index]
            if byte == 0x22 {
                let text = UnsafeBufferPointer(start: base + position + 1, count: index - position - 1)
                position = index + 1
                return (text, high < 0x80)
            }
            if byte == 0x5C || byte < 0x20 { return nil }
            high |= byte
            index += 1
        }
        return nil
    }

    /// A string; nil for anything else, including invalid UTF-8 (JSONDecoder refuses it too).
    mutating func string() -> String? {
        let start = position
        if let plain = plainString() {
            if plain.ascii { return String(decoding: plain.bytes, as: UTF8.self) }
            guard let text = String(validating: plain.bytes, as: UTF8.self) else {
                position = start
                return nil
            }
            return text
        }
        return escapedString()
    }

    private mutating func escapedString() -> String? {
        skipSpace()
        guard position < end, base[position] == 0x22 else { return nil }
        var index = position + 1
        var out: [UInt8] = []
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= end else { return nil }
            var value: UInt32 = 0
            for offset in 0..<4 {
                let byte = base[at + offset]
                let digit: UInt32
                switch byte {
                case 48...57: digit = UInt32(byte - 48)
                case 97...102: digit = UInt32(byte - 87)
                case 65...70: digit = UInt32(byte - 55)
                default: return nil
                }
                value = value << 4 | digit
            }
            return value
        }
        while index < end {
            let byte = base[index]
            switch byte {
            case 0x22:
                guard let text = String(validating: out, as: UTF8.self) else { return nil }
                position = index + 1
                return text
            case 0..<0x20:
                return nil
            case 0x5C:
                guard index + 1 < end else { return nil }
                let escape = base[index + 1]
                index += 2
                switch escape {
                case 0x22, 0x5C, 0x2F: out.append(escape)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4(index) else { return nil }
                    index += 4
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard index + 6 <= end, base[index] == 0x5C, base[index + 1] == UInt8(ascii: "u"),
                              let low = hex4(index + 2), (0xDC00..<0xE000).contains(low) else { return nil }
                        index += 6
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { return nil }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    return nil
                }
            default:
                out.append(byte)
                index += 1
            }
        }
        return nil
    }

    /// A string holding an RFC 3339 timestamp.
    mutating func date() -> Date? {
        if let plain = plainString() {
            return ISO8601.parseFast(plain.bytes) ?? (plain.ascii ? ISO8601.parse(String(decoding: plain.bytes, as: UTF8.self)) : nil)
        }
        return string().flatMap(ISO8601.parse)
    }

    /// An integer without fraction or exponent.
    mutating func int() -> Int? {
        skipSpace()
        var index = position
        var negative = false
        if index < end, base[index] == UInt8(ascii: "-") { negative = true; index += 1 }
        let first = index
        var value = 0
        while index < end, (48...57).contains(base[index]) {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(base[index] - 48))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
            index += 1
        }
        guard index > first else { return nil }
        if index < end {
            switch base[index] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        position = index
        return negative ? -value : value
    }

    /// An object: `body` is called with each key, positioned at its value, and must
    /// read (or skip) that value; returning false abandons the object.
    mutating func object(_ body: (inout JSONBytesReader, String) -> Bool) -> Bool {
        guard consume(UInt8(ascii: "{")) else { return false }
        if consume(UInt8(ascii: "}")) { return true }
        repeat {
            guard let key = string(), consume(UInt8(ascii: ":")), body(&self, key) else { return false }
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "}"))
    }

    /// Skips one value of any kind (a key this version does not know).
    mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < 64 else { return false }
        skipSpace()
        guard position < end else { return false }
        switch base[position] {
        case 0x22:
            return string() != nil
        case UInt8(ascii: "{"):
            return object { reader, _ in reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            position += 1
            if consume(UInt8(ascii: "]")) { return true }
            repeat {
                guard skipValue(depth: depth + 1) else { return false }
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "]"))
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            for literal in ["true", "false", "null"] {
                let utf8 = Array(literal.utf8)
                if end - position >= utf8.count, (0..<utf8.count).allSatisfy({ base[position + $0] == utf8[$0] }) {
                    position += utf8.count
                    return true
                }
            }
            return false
        default:
            var index = position
            while index < end, "+-0123456789.eE".utf8.contains(base[index]) { index += 1 }
            guard index > position else { return false }
            position = index
            return true
        }
    }
}

import Foundation

/// Reads JSON from a file descriptor a piece at a time (1 MB), one token at a time, for a
/// document too large to hold: `metadata.json` of a million users is 160 MB, and
/// JSONDecoder's tree of it took `verify` to 1.09 GB. No tree and no Any: the caller walks
/// the objects it wants (`members`) and skips the rest (`skipValue`), which checks their
/// syntax all the same. Errors give the byte offset where the document stops being JSON.
struct JSONStreamReader {
    struct Failure: Error, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "at byte \(offset): \(reason)" }
    }

    private let fd: Int32
    private let capacity = 1 << 20
    private let buffer: UnsafeMutablePointer<UInt8>
    private var position = 0
    private var count = 0
    /// Bytes of the file before `buffer`'s first.
    private var consumed = 0
    private var atEOF = false
    /// A string's unescaped bytes (`string()` returns them; reused).
    private var text: [UInt8] = []
    /// Nesting a skipped value may have: deeper is refused rather than recursed into.
    private static let maxDepth = 128

    /// Reads from `fd` (not closed here).
    init(fd: Int32) {
        self.fd = fd
        buffer = .allocate(capacity: capacity)
        text.reserveCapacity(256)
    }

    /// Frees the buffer; the reader is unusable after.
    func release() { buffer.deallocate() }

    var offset: Int { consumed + position }

    func failure(_ reason: String) -> Failure { Failure(offset: offset, reason: reason) }

    /// The next byte, without consuming it; nil at the end of the file.
    @inline(__always)
    private mutating func peekByte() throws -> UInt8? {
        if position == count, try !refill() { return nil }
        return buffer[position]
    }

    private mutating func refill() throws -> Bool {
        guard !atEOF else { return false }
        consumed += count
        position = 0
        count = 0
        while true {
            let read = Glibc.read(fd, buffer, capacity)
            if read < 0 {
                if errno == EINTR { continue }
                throw failure(String(cString: strerror(errno)))
            }
            if read == 0 { atEOF = true; return false }
            count = read
            return true
        }
    }

    /// The next byte that is not white space, not consumed; nil at the end of the file.
    mutating func peek() throws -> UInt8? {
        while let byte = try peekByte() {
            switch byte {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return byte
            }
        }
        return nil
    }

    /// Consumes `byte` (after white space), or fails saying what was expected.
    mutating func expect(_ byte: UInt8, _ what: @autoclosure () -> String) throws {
        guard try peek() == byte else { throw failure("expected \(what()), found \(try found())") }
        position += 1
    }

    private mutating func found() throws -> String {
        guard let byte = try peek() else { return "the end of the file (truncated?)" }
        return byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : String(format: "byte 0x%02X", byte)
    }

    /// Nothing but white space is left.
    mutating func expectEnd() throws {
        if try peek() != nil { throw failure("unexpected \(try found()) after the document") }
    }

    /// Whether the next value is `null` (consumed when it is).
    mutating func null() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// The members of an object, each key handed to `body`, which must consume its value
    /// (`string()`, `members`, `skipValue()`…).
    mutating func members(_ body: (inout JSONStreamReader, [UInt8]) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "an object")
        if try peek() == UInt8(ascii: "}") { position += 1; return }
        while true {
            guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a key, found \(try found())") }
            let key = try string()
            try expect(UInt8(ascii: ":"), "':'")
            try body(&self, key)
            guard let byte = try peek() else { throw failure("an object is not closed (truncated?)") }
            position += 1
            if byte == UInt8(ascii: "}") { return }
            guard byte == UInt8(ascii: ",") else { position -= 1; throw failure("expected ',' or '}', found \(try found())") }
        }
    }

    /// A string's bytes, unescaped (UTF-8). Valid until the next call.
    mutating func string() throws -> [UInt8] {
        try expect(UInt8(ascii: "\""), "a string")
        text.removeAll(keepingCapacity: true)
        while true {
            if position == count, try !refill() { throw failure("a string is not closed (truncated?)") }
            // The plain run up to the next quote, backslash or control byte, copied at once.
            var end = position
            while end < count {
                let byte = buffer[end]
                if byte == 0x22 || byte == 0x5C || byte < 0x20 { break }
                end += 1
            }
            text.append(contentsOf: UnsafeBufferPointer(start: buffer + position, count: end - position))
            position = end
            guard position < count else { continue }
            let byte = buffer[position]
            position += 1
            if byte == 0x22 { return text }
            guard byte == 0x5C else { position -= 1; throw failure("a control character in a string") }
            try escape()
        }
    }

    /// After a backslash: the character it stands for, appended to `text`.
    private mutating func escape() throws {
        guard let byte = try peekByte() else { throw failure("a string is not closed (truncated?)") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(byte)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate: its low half must follow as another \u escape.
                guard try peekByte() == 0x5C else { throw failure("a lone surrogate in a string") }
                position += 1
                guard try peekByte() == UInt8(ascii: "u") else { throw failure("a lone surrogate in a string") }
                position += 1
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw failure("a lone surrogate in a string") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw failure("a lone surrogate in a string")
            }
            text.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            position -= 1
            throw failure("an unknown escape in a string")
        }
    }

    private mutating func hex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = try peekByte() else { throw failure("a string is not closed (truncated?)") }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape without four hex digits")
            }
            position += 1
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A whole number (an integer value, as `schemaVersion`).
    mutating func integer() throws -> Int {
        let start = offset
        var digits: [UInt8] = []
        try number { digits.append($0) }
        guard let value = Int(String(decoding: digits, as: UTF8.self)) else {
            throw Failure(offset: start, reason: "expected a whole number")
        }
        return value
    }

    /// A number, its bytes handed to `each` (JSON's grammar: sign, digits, fraction, exponent).
    private mutating func number(_ each: (UInt8) -> Void = { _ in }) throws {
        guard let first = try peek(), first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw failure("expected a number, found \(try found())")
        }
        var digits = 0
        while let byte = try peekByte() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): break
            default:
                guard digits > 0 else { throw failure("a number without digits") }
                return
            }
            each(byte)
            position += 1
        }
        guard digits > 0 else { throw failure("a number without digits") }
    }

    private mutating func literal(_ word: StaticString) throws {
        for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard try peekByte() == expected else { throw failure("expected \(word)") }
            position += 1
        }
    }

    /// Consumes any value, checking its syntax.
    mutating func skipValue(depth: Int = 0) throws {
        guard depth < Self.maxDepth else { throw failure("values nested deeper than \(Self.maxDepth)") }
        guard let byte = try peek() else { throw failure("expected a value, found the end of the file (truncated?)") }
        switch byte {
        case UInt8(ascii: "{"):
            try members { reader, _ in try reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            position += 1
            if try peek() == UInt8(ascii: "]") { position += 1; return }
            while true {
                try skipValue(depth: depth + 1)
                guard let next = try peek() else { throw failure("an array is not closed (truncated?)") }
                position += 1
                if next == UInt8(ascii: "]") { return }
                guard next == UInt8(ascii: ",") else { position -= 1; throw failure("expected ',' or ']', found \(try found())") }
            }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: try number()
        }
    }
}

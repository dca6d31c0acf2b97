#if canImport(Glibc)
import Glibc
#endif

/// The one JSON tokenizer of the package: bytes in (a buffer in memory, or a file read a
/// piece at a time, 1 MB by default), one value at a time out. No tree, no `Any`, no
/// `String` built a character at a time: a plain string (no escapes, inside the piece) is
/// made from its bytes in one call, keys are handed over as bytes, and what the caller
/// does not want is skipped with its syntax checked all the same (`skipValue`). Memory
/// stays one piece however large the document: `metadata.json` of a million users is
/// 160 MB, an export of a million profiles 80 MB.
///
/// Every error says where the input stops being what it should, as a byte offset
/// (`Failure`: "at byte N: why").
///
/// Users: the export readers' fast path (a record's bytes, `init(bytes:)`), `verify`'s
/// walk of `metadata.json` (`init(fd:)`) and the record splitter (`JSONRecordStream`),
/// which cuts an export into records with the lenient scans at the end of this file
/// (strings and brackets only, so that one broken record is reported and the rest go on).
package struct JSONReader {
    package struct Failure: Error, CustomStringConvertible, Sendable, Equatable {
        package let offset: Int
        package let reason: String
        package init(offset: Int, reason: String) {
            self.offset = offset
            self.reason = reason
        }
        package var description: String { "at byte \(offset): \(reason)" }
    }

    /// A file read a piece at a time into one buffer (freed, and the file closed when
    /// it was opened here, with the last reader holding it).
    private final class Pieces {
        let fd: Int32
        let closes: Bool
        let storage: UnsafeMutablePointer<UInt8>
        let capacity: Int
        var atEOF = false

        init(fd: Int32, closes: Bool, capacity: Int) {
            self.fd = fd
            self.closes = closes
            self.capacity = max(1, capacity)
            storage = .allocate(capacity: self.capacity)
        }

        deinit {
            storage.deallocate()
            if closes { close(fd) }
        }
    }

    /// The bytes in hand: a piece of the file, or the whole buffer.
    private var window: UnsafePointer<UInt8>
    private var count: Int
    private var position = 0
    /// Bytes of the input before `window`'s first.
    private var consumed = 0
    private let pieces: Pieces?
    /// A string's unescaped bytes (`string()` returns them; reused).
    private var text: [UInt8] = []
    /// An object's key (`members` hands it over; reused).
    private var keyText: [UInt8] = []
    /// Whether `line()` is kept: the newlines before `lineMark` in the window are counted
    /// in `lineAtMark`.
    private let countsLines: Bool
    private var lineAtMark = 1
    private var lineMark = 0
    /// Nesting a skipped value may have: deeper is refused rather than recursed into.
    package static let maxDepth = 128

    /// Reads `bytes`, which must stay valid while the reader is used.
    package init(bytes: UnsafeRawBufferPointer) {
        let typed = bytes.bindMemory(to: UInt8.self)
        window = typed.baseAddress.map { UnsafePointer($0) } ?? UnsafePointer(bitPattern: 1)!
        count = typed.count
        pieces = nil
        countsLines = false
    }

    /// Reads from `fd` (not closed here), `pieceSize` bytes at a time.
    package init(fd: Int32, pieceSize: Int = 1 << 20, countsLines: Bool = false) {
        pieces = Pieces(fd: fd, closes: false, capacity: pieceSize)
        window = UnsafePointer(pieces!.storage)
        count = 0
        self.countsLines = countsLines
    }

    /// Reads the file at `path` (closed when the last copy of the reader goes); nil when
    /// it cannot be opened.
    package init?(path: String, pieceSize: Int = 1 << 20, countsLines: Bool = false) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        pieces = Pieces(fd: fd, closes: true, capacity: pieceSize)
        window = UnsafePointer(pieces!.storage)
        count = 0
        self.countsLines = countsLines
    }

    /// Starts over on `bytes` (a memory reader's next record), keeping the buffers it grew.
    package mutating func reset(bytes: UnsafeRawBufferPointer) {
        precondition(pieces == nil, "a file's reader reads its file")
        let typed = bytes.bindMemory(to: UInt8.self)
        window = typed.baseAddress.map { UnsafePointer($0) } ?? UnsafePointer(bitPattern: 1)!
        count = typed.count
        position = 0
        consumed = 0
    }

    /// Bytes of the input read so far (where the next token starts, after white space).
    package var offset: Int { consumed + position }

    package func failure(_ reason: String) -> Failure { Failure(offset: offset, reason: reason) }

    // MARK: Bytes

    /// The next byte, without consuming it; nil at the end of the input.
    @inline(__always)
    private mutating func peekByte() throws -> UInt8? {
        if position == count, try !refill() { return nil }
        return window[position]
    }

    @inline(never)
    private mutating func refill() throws -> Bool {
        guard let pieces, !pieces.atEOF else { return false }
        if countsLines { countLines(upTo: count); lineMark = 0 }
        consumed += count
        position = 0
        count = 0
        while true {
            let read = Glibc.read(pieces.fd, pieces.storage, pieces.capacity)
            if read < 0 {
                if errno == EINTR { continue }
                throw failure(String(cString: strerror(errno)))
            }
            if read == 0 { pieces.atEOF = true; return false }
            count = read
            return true
        }
    }

    private mutating func countLines(upTo end: Int) {
        var newlines = 0
        var index = lineMark
        // Eight bytes at a time: a byte of `x` is zero exactly where a line feed was, and
        // `found` has the high bit of each such byte set, no other.
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let feeds: UInt64 = 0x0A0A_0A0A_0A0A_0A0A
        while index + 8 <= end {
            let x = UnsafeRawPointer(window + index).loadUnaligned(as: UInt64.self) ^ feeds
            let found = ~(((x & low7) &+ low7) | x | low7)
            newlines &+= found.nonzeroBitCount
            index += 8
        }
        while index < end {
            newlines &+= window[index] == 0x0A ? 1 : 0
            index += 1
        }
        lineAtMark += newlines
        lineMark = end
    }

    /// The 1-based line of the next byte (a reader made with `countsLines`).
    package mutating func line() -> Int {
        precondition(countsLines, "a reader made without countsLines")
        countLines(upTo: position)
        return lineAtMark
    }

    /// JSON's white space: space, line feed, carriage return, tab.
    @inline(__always)
    package static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    // MARK: Tokens

    /// The next byte that is not white space, not consumed; nil at the end of the input.
    package mutating func peek() throws -> UInt8? {
        while true {
            while position < count {
                let byte = window[position]
                guard Self.isWhitespace(byte) else { return byte }
                position += 1
            }
            guard try refill() else { return nil }
        }
    }

    /// Consumes `byte` (after white space), or fails saying what was expected.
    package mutating func expect(_ byte: UInt8, _ what: @autoclosure () -> String) throws {
        guard try peek() == byte else { throw failure("expected \(what()), found \(try found())") }
        position += 1
    }

    /// What the next byte is, for an error: "'x'", "byte 0x0C" or the end of the input.
    package mutating func found() throws -> String {
        guard let byte = try peek() else { return "the end of the file (truncated?)" }
        return Self.describe(byte, quote: "'")
    }

    /// A byte as an error shows it: the character between `quote`s when printable, else
    /// "byte 0xNN".
    package static func describe(_ byte: UInt8, quote: Character) -> String {
        if byte >= 0x20 && byte < 0x7F { return "\(quote)\(Character(Unicode.Scalar(byte)))\(quote)" }
        let digits = Array("0123456789ABCDEF")
        return "byte 0x\(digits[Int(byte >> 4)])\(digits[Int(byte & 15)])"
    }

    /// Nothing but white space is left.
    package mutating func expectEnd() throws {
        if try peek() != nil { throw failure("unexpected \(try found()) after the document") }
    }

    /// Whether the next value is `null` (consumed when it is).
    package mutating func null() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// The members of an object, each key handed to `body`, which must consume its value
    /// (`string()`, `members`, `skipValue()`…).
    package mutating func members(_ body: (inout JSONReader, [UInt8]) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "an object")
        if try peek() == UInt8(ascii: "}") { position += 1; return }
        while true {
            guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a key, found \(try found())") }
            try readString(into: .key)
            let key = keyText
            try expect(UInt8(ascii: ":"), "':'")
            try body(&self, key)
            guard let byte = try peek() else { throw failure("an object is not closed (truncated?)") }
            position += 1
            if byte == UInt8(ascii: "}") { return }
            guard byte == UInt8(ascii: ",") else { position -= 1; throw failure("expected ',' or '}', found \(try found())") }
        }
    }

    /// The elements of an array, `body` called at each, which must consume it.
    package mutating func elements(_ body: (inout JSONReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "an array")
        if try peek() == UInt8(ascii: "]") { position += 1; return }
        while true {
            try body(&self)
            guard let next = try peek() else { throw failure("an array is not closed (truncated?)") }
            position += 1
            if next == UInt8(ascii: "]") { return }
            guard next == UInt8(ascii: ",") else { position -= 1; throw failure("expected ',' or ']', found \(try found())") }
        }
    }

    /// A string's bytes, unescaped (UTF-8, not checked). Valid until the next call.
    package mutating func string() throws -> [UInt8] {
        try readString(into: .text)
        return text
    }

    /// A string as text; fails when its bytes are not UTF-8. A string without escapes
    /// inside the piece in hand is made from those bytes directly.
    package mutating func stringValue() throws -> String {
        guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a string, found \(try found())") }
        let start = position + 1
        var end = start
        var high: UInt8 = 0
        while end < count {
            let byte = window[end]
            if byte == 0x22 || byte == 0x5C || byte < 0x20 { break }
            high |= byte
            end += 1
        }
        if end < count, window[end] == 0x22 {
            let bytes = UnsafeBufferPointer(start: window + start, count: end - start)
            let value: String
            if high < 0x80 {
                value = String(decoding: bytes, as: UTF8.self)
            } else {
                guard let valid = String(validating: bytes, as: UTF8.self) else { throw failure("a string that is not UTF-8") }
                value = valid
            }
            position = end + 1
            return value
        }
        let at = offset
        try readString(into: .text)
        guard let valid = String(validating: text, as: UTF8.self) else { throw Failure(offset: at, reason: "a string that is not UTF-8") }
        return valid
    }

    /// Where a string's unescaped bytes go.
    private enum Into { case text, key, nowhere }

    @inline(__always)
    private mutating func store(_ bytes: UnsafeBufferPointer<UInt8>, _ into: Into) {
        switch into {
        case .text: text.append(contentsOf: bytes)
        case .key: keyText.append(contentsOf: bytes)
        case .nowhere: break
        }
    }

    @inline(__always)
    private mutating func store(_ byte: UInt8, _ into: Into) {
        switch into {
        case .text: text.append(byte)
        case .key: keyText.append(byte)
        case .nowhere: break
        }
    }

    /// The string at the reader (after white space), unescaped into `text` or `keyText`.
    private mutating func readString(into: Into) throws {
        try expect(UInt8(ascii: "\""), "a string")
        switch into {
        case .text: text.removeAll(keepingCapacity: true)
        case .key: keyText.removeAll(keepingCapacity: true)
        case .nowhere: break
        }
        try stringBody(into: into)
    }

    /// A string after its opening quote, up to and with its closing one; its bytes,
    /// unescaped, stored `into`.
    private mutating func stringBody(into: Into) throws {
        while true {
            if position == count, try !refill() { throw failure("a string is not closed (truncated?)") }
            // The plain run up to the next quote, backslash or control byte, at once.
            var end = position
            while end < count {
                let byte = window[end]
                if byte == 0x22 || byte == 0x5C || byte < 0x20 { break }
                end += 1
            }
            if into != .nowhere { store(UnsafeBufferPointer(start: window + position, count: end - position), into) }
            position = end
            guard position < count else { continue }
            let byte = window[position]
            position += 1
            if byte == 0x22 { return }
            guard byte == 0x5C else { position -= 1; throw failure("a control character in a string") }
            try escape(into: into)
        }
    }

    /// After a backslash: the character it stands for, appended to `out`.
    private mutating func escape(into: Into) throws {
        guard let byte = try peekByte() else { throw failure("a string is not closed (truncated?)") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): store(byte, into)
        case UInt8(ascii: "b"): store(0x08, into)
        case UInt8(ascii: "f"): store(0x0C, into)
        case UInt8(ascii: "n"): store(0x0A, into)
        case UInt8(ascii: "r"): store(0x0D, into)
        case UInt8(ascii: "t"): store(0x09, into)
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
            storeUTF8(scalar, into)
        default:
            position -= 1
            throw failure("an unknown escape in a string")
        }
    }

    /// A scalar's UTF-8 bytes (`scalar` is not a surrogate).
    private mutating func storeUTF8(_ scalar: UInt32, _ into: Into) {
        switch scalar {
        case ..<0x80:
            store(UInt8(scalar), into)
        case ..<0x800:
            store(UInt8(0xC0 | scalar >> 6), into)
            store(UInt8(0x80 | scalar & 0x3F), into)
        case ..<0x10000:
            store(UInt8(0xE0 | scalar >> 12), into)
            store(UInt8(0x80 | scalar >> 6 & 0x3F), into)
            store(UInt8(0x80 | scalar & 0x3F), into)
        default:
            store(UInt8(0xF0 | scalar >> 18), into)
            store(UInt8(0x80 | scalar >> 12 & 0x3F), into)
            store(UInt8(0x80 | scalar >> 6 & 0x3F), into)
            store(UInt8(0x80 | scalar & 0x3F), into)
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

    /// A whole number (an integer value, as `schemaVersion`): no fraction, no exponent,
    /// within `Int`.
    package mutating func integer() throws -> Int {
        let start = offset
        var value = 0
        var negative = false, whole = true, first = true
        try number { byte in
            defer { first = false }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard whole else { return }
                let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = negative ? times.subtractingReportingOverflow(Int(byte &- 48)) : times.addingReportingOverflow(Int(byte &- 48))
                if overflow1 || overflow2 { whole = false } else { value = sum }
            case UInt8(ascii: "-") where first:
                negative = true
            default:
                whole = false
            }
        }
        guard whole else { throw Failure(offset: start, reason: "expected a whole number") }
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

    /// A number's text, as JSON's grammar has it (`-`, digits without a leading zero, a
    /// fraction, an exponent); fails at anything else ("01", "1.", "+1", "1-2").
    package mutating func numberToken() throws -> [UInt8] {
        _ = try peek()
        let start = offset
        var token: [UInt8] = []
        try number { token.append($0) }
        guard Self.isJSONNumber(token) else { throw Failure(offset: start, reason: "not a JSON number") }
        return token
    }

    /// Whether `token` is a number as JSON's grammar writes one.
    static func isJSONNumber(_ token: [UInt8]) -> Bool {
        var index = 0
        func digits() -> Int {
            let first = index
            while index < token.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(token[index]) { index += 1 }
            return index - first
        }
        if index < token.count, token[index] == UInt8(ascii: "-") { index += 1 }
        let first = index
        let whole = digits()
        guard whole > 0, whole == 1 || token[first] != UInt8(ascii: "0") else { return false }
        if index < token.count, token[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < token.count, token[index] == UInt8(ascii: "e") || token[index] == UInt8(ascii: "E") {
            index += 1
            if index < token.count, token[index] == UInt8(ascii: "+") || token[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
        }
        return index == token.count
    }

    /// `true` or `false`.
    package mutating func boolean() throws -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: throw failure("expected true or false, found \(try found())")
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard try peekByte() == expected else { throw failure("expected \(word)") }
            position += 1
        }
    }

    /// Consumes any value, checking its syntax.
    package mutating func skipValue(depth: Int = 0) throws {
        guard depth < Self.maxDepth else { throw failure("values nested deeper than \(Self.maxDepth)") }
        guard let byte = try peek() else { throw failure("expected a value, found the end of the file (truncated?)") }
        switch byte {
        case UInt8(ascii: "{"):
            position += 1
            if try peek() == UInt8(ascii: "}") { position += 1; return }
            while true {
                guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a key, found \(try found())") }
                position += 1
                try stringBody(into: .nowhere)
                try expect(UInt8(ascii: ":"), "':'")
                try skipValue(depth: depth + 1)
                guard let next = try peek() else { throw failure("an object is not closed (truncated?)") }
                position += 1
                if next == UInt8(ascii: "}") { return }
                guard next == UInt8(ascii: ",") else { position -= 1; throw failure("expected ',' or '}', found \(try found())") }
            }
        case UInt8(ascii: "["):
            try elements { reader in try reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "\""):
            position += 1
            try stringBody(into: .nowhere)
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: try number()
        }
    }

    // MARK: Lenient scans, for the record splitter

    // A record is cut out by its strings and brackets alone (a backslash escapes the
    // byte after it, whatever it is), so that a record broken inside is cut all the same
    // and reported on its own when it is read.

    /// Consumes the next byte, if there is one.
    mutating func advance() throws {
        if try peekByte() != nil { position += 1 }
    }

    /// The next byte, white space included, not consumed.
    mutating func peekRaw() throws -> UInt8? { try peekByte() }

    /// Skips white space and commas (between the records of an array).
    mutating func skipSeparators() throws {
        while let byte = try peekByte(), byte == UInt8(ascii: ",") || Self.isWhitespace(byte) { position += 1 }
    }

    /// Skips white space and colons (between a key of the object of records and its record).
    mutating func skipColons() throws {
        while let byte = try peekByte(), byte == UInt8(ascii: ":") || Self.isWhitespace(byte) { position += 1 }
    }

    /// A UTF-8 byte-order mark (three bytes from 0xEF on) is skipped.
    mutating func skipByteOrderMark() throws {
        if try peekByte() == 0xEF { for _ in 0..<3 { try advance() } }
    }

    /// What `cutValue` cut.
    enum Cut: Equatable {
        case value([UInt8])
        /// More than the limit: what is past it was skipped.
        case tooLarge
        /// The input ends inside the value.
        case truncated
    }

    /// Bytes appended to `out` up to `limit`; past it, `over` is set.
    @inline(__always)
    private func append(_ from: Int, _ to: Int, to out: inout [UInt8], limit: Int, over: inout Bool) {
        let room = limit - out.count
        let length = to - from
        if length <= room {
            out.append(contentsOf: UnsafeBufferPointer(start: window + from, count: length))
        } else {
            if room > 0 { out.append(contentsOf: UnsafeBufferPointer(start: window + from, count: room)) }
            over = true
        }
    }

    /// The value at the reader (no white space before it), cut out by its strings and
    /// brackets: up to the bracket that closes it, or, for anything else, up to the next
    /// `,` or `closing` outside strings and brackets (not consumed).
    mutating func cutValue(closing: UInt8, limit: Int) throws -> Cut {
        var out: [UInt8] = []
        var over = false
        var depth = 0
        var inString = false, escaped = false
        var start = position
        while true {
            if position == count {
                append(start, position, to: &out, limit: limit, over: &over)
                guard try refill() else { break }
                start = 0
            }
            if inString {
                // The string's plain run at once.
                if escaped {
                    escaped = false
                    position += 1
                    continue
                }
                while position < count {
                    let byte = window[position]
                    if byte == 0x22 || byte == 0x5C { break }
                    position += 1
                }
                guard position < count else { continue }
                if window[position] == 0x5C { escaped = true } else { inString = false }
                position += 1
                continue
            }
            let byte = window[position]
            if depth == 0 && (byte == UInt8(ascii: ",") || byte == closing) {
                append(start, position, to: &out, limit: limit, over: &over)
                return over ? .tooLarge : .value(out)
            }
            position += 1
            switch byte {
            case 0x22: inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 {
                    append(start, position, to: &out, limit: limit, over: &over)
                    return over ? .tooLarge : .value(out)
                }
            default: break
            }
        }
        if depth > 0 || inString { return .truncated }
        return over ? .tooLarge : .value(out)
    }

    /// A line: its bytes (without the line feed) up to `limit` (`over` set past it);
    /// nil at the end of the input. `ended`: a line feed ended it.
    mutating func cutLine(limit: Int, over: inout Bool) throws -> (bytes: [UInt8], ended: Bool)? {
        guard try peekByte() != nil else { return nil }
        var out: [UInt8] = []
        var start = position
        while true {
            while position < count, window[position] != 0x0A { position += 1 }
            append(start, position, to: &out, limit: limit, over: &over)
            if position < count {
                position += 1
                return (out, true)
            }
            guard try refill() else { return (out, false) }
            start = 0
        }
    }

    /// A key's raw bytes after its opening quote, up to its closing quote (consumed, not
    /// kept) or past `limit` bytes; escapes are kept as written.
    mutating func rawString(limit: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        var escaped = false
        while let byte = try peekByte() {
            position += 1
            if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { break }
            out.append(byte)
            if out.count > limit { break }
        }
        return out
    }

    /// How the first object of an export ends.
    enum Head {
        /// It holds the records under `recordsKey`: the reader is past the `[` (or `{`) that opens them.
        case records(opening: UInt8)
        /// A whole object without them (the first record of NDJSON), its bytes.
        case object([UInt8])
        /// Larger than the limit without the records' key.
        case tooLarge
        /// The input ends inside it.
        case truncated
    }

    /// The first object (the reader at its `{`): whether it holds `recordsKey` with an
    /// array (or, with `members`, an object) of records, or is a record itself.
    mutating func head(recordsKey: [UInt8], members: Bool, limit: Int) throws -> Head {
        var out: [UInt8] = []
        var depth = 0
        var inString = false, escaped = false
        var stringStart = 0
        var lastString: [UInt8]?
        var lastKey: [UInt8]?
        while let byte = try peekByte() {
            position += 1
            out.append(byte)
            if inString {
                if escaped { escaped = false }
                else if byte == 0x5C { escaped = true }
                else if byte == 0x22 {
                    inString = false
                    if depth == 1 { lastString = Array(out[stringStart..<(out.count - 1)]) }
                }
                continue
            }
            switch byte {
            case 0x22:
                inString = true
                stringStart = out.count
            case UInt8(ascii: ":") where depth == 1:
                lastKey = lastString
            case UInt8(ascii: ","):
                if depth == 1 { lastKey = nil }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if depth == 1 && lastKey == recordsKey && (byte == UInt8(ascii: "[") || members) {
                    return .records(opening: byte)
                }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return .object(out) }
            default:
                break
            }
            if out.count > limit { return .tooLarge }
        }
        return .truncated
    }
}

import Foundation

/// Splits a JSON export into its records without holding the file in memory.
///
/// Three shapes are recognised from the first bytes:
/// - a top-level array `[ {...}, {...} ]`: each element is a record;
/// - an object holding the records in an array under `recordsKey` (`{"users": [...]}`):
///   each element of that array is a record, other keys are skipped;
/// - with `membersAreRecords`, an object holding the records in an object under `recordsKey`, keyed by id
///   (`{"users": {"u1": {...}}}`, as Realtime Database exports and many dump scripts
///   write them): each member's value is a record, its key the record's `key`;
/// - NDJSON: one object per line; when the first object closes without holding
///   `recordsKey`, the file is read line by line from there on, so a broken line costs
///   that line only.
///
/// Only string, escape and bracket state is tracked here; each record's bytes are then
/// decoded on their own, so a bad record is reported and the rest go on.
public struct JSONRecordStream: Sequence, IteratorProtocol {
    public struct Record {
        /// 1-based position of the record in the export.
        public var index: Int
        /// 1-based line on which the record starts.
        public var line: Int
        /// The record's JSON bytes, or why they could not be cut out.
        public var bytes: Result<[UInt8], RecordError>
        /// Its key, when the records are an object's members.
        public var key: String?
    }

    public struct RecordError: Error, CustomStringConvertible {
        public var description: String
    }

    private enum Mode { case detect, array(depth: Int), members, lines, done }

    private let reader: ChunkedReader
    private let recordsKey: String
    private let maxRecordBytes: Int
    private let membersAreRecords: Bool
    private var mode: Mode = .detect
    private var index = 0
    private var line = 1

    public init(path: String, recordsKey: String, maxRecordBytes: Int = 16 << 20, membersAreRecords: Bool = false) throws {
        reader = try ChunkedReader(path: path)
        self.recordsKey = recordsKey
        self.maxRecordBytes = maxRecordBytes
        self.membersAreRecords = membersAreRecords
    }

    public mutating func next() -> Record? {
        while true {
            switch mode {
            case .done:
                return nil
            case .detect:
                skipWhitespace()
                guard let first = reader.peek() else { mode = .done; return nil }
                if first == UInt8(ascii: "[") {
                    reader.advance()
                    mode = .array(depth: 1)
                } else if first == UInt8(ascii: "{") {
                    if let record = detectObjectShape() { return record }
                } else {
                    mode = .done
                    index += 1
                    return Record(index: index, line: line, bytes: .failure(RecordError(description: "the export does not start with [ or {: found \(Self.describe(first))")))
                }
            case .array(let depth):
                if let record = nextArrayElement(depth: depth) { return record }
            case .members:
                if let record = nextMember() { return record }
            case .lines:
                if let record = nextLine() { return record }
            }
        }
    }

    /// Reads the first object. If it holds `recordsKey: [`, switches to array mode at
    /// depth 2 (its contents so far are dropped); otherwise returns it as the first
    /// NDJSON record and switches to line mode.
    private mutating func detectObjectShape() -> Record? {
        let startLine = line
        var buffer: [UInt8] = []
        var depth = 0
        var inString = false, escaped = false
        var stringStart = 0
        var lastString: String?
        var lastKey: String?
        while let byte = reader.next() {
            buffer.append(byte)
            if byte == UInt8(ascii: "\n") { line += 1 }
            if inString {
                if escaped { escaped = false }
                else if byte == UInt8(ascii: "\\") { escaped = true }
                else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 1 {
                        lastString = String(decoding: buffer[stringStart..<(buffer.count - 1)], as: UTF8.self)
                    }
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                stringStart = buffer.count
            case UInt8(ascii: ":") where depth == 1:
                lastKey = lastString
            case UInt8(ascii: ","):
                if depth == 1 { lastKey = nil }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if depth == 1 && lastKey == recordsKey && (byte == UInt8(ascii: "[") || membersAreRecords) {
                    mode = byte == UInt8(ascii: "[") ? .array(depth: 1) : .members
                    return nil
                }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 {
                    mode = .lines
                    index += 1
                    return Record(index: index, line: startLine, bytes: .success(buffer))
                }
            default:
                break
            }
            if buffer.count > maxRecordBytes {
                mode = .done
                index += 1
                return Record(index: index, line: startLine, bytes: .failure(RecordError(description: "the first object is larger than \(maxRecordBytes) bytes and holds no \"\(recordsKey)\" array")))
            }
        }
        mode = .done
        index += 1
        return Record(index: index, line: startLine, bytes: .failure(RecordError(description: "the export ends inside its first object (truncated?)")))
    }

    /// The next member of the object of records: its key, then its value as a record.
    private mutating func nextMember() -> Record? {
        while let byte = reader.peek(), byte == UInt8(ascii: ",") || Self.isWhitespace(byte) {
            if byte == UInt8(ascii: "\n") { line += 1 }
            reader.advance()
        }
        guard let first = reader.peek() else {
            mode = .done
            index += 1
            return Record(index: index, line: line, bytes: .failure(RecordError(description: "the export ends before its closing } (truncated?)")))
        }
        if first == UInt8(ascii: "}") {
            reader.advance()
            mode = .done
            return nil
        }
        guard first == UInt8(ascii: "\"") else {
            mode = .done
            index += 1
            return Record(index: index, line: line, bytes: .failure(RecordError(description: "expected a key in the object of records, found \(Self.describe(first))")))
        }
        var keyBytes: [UInt8] = []
        var escaped = false
        reader.advance()
        while let byte = reader.next() {
            if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { break }
            keyBytes.append(byte)
            if keyBytes.count > 4096 { break }
        }
        let key = (try? JSONDecoder().decode(String.self, from: Data([UInt8(ascii: "\"")] + keyBytes + [UInt8(ascii: "\"")])))
            ?? String(decoding: keyBytes, as: UTF8.self)
        while let byte = reader.peek(), byte == UInt8(ascii: ":") || Self.isWhitespace(byte) {
            if byte == UInt8(ascii: "\n") { line += 1 }
            reader.advance()
        }
        var record = nextArrayElement(depth: 1, closing: UInt8(ascii: "}"))
        record?.key = key
        return record
    }

    /// The next element of the array whose contents sit at `depth` 1 (relative), up to
    /// `closing` (the array's `]`, or the `}` of an object of records).
    private mutating func nextArrayElement(depth _: Int, closing: UInt8 = UInt8(ascii: "]")) -> Record? {
        // Skip separators up to the element or the closing bracket.
        while let byte = reader.peek() {
            if byte == UInt8(ascii: ",") || Self.isWhitespace(byte) {
                if byte == UInt8(ascii: "\n") { line += 1 }
                reader.advance()
            } else { break }
        }
        guard let first = reader.peek() else {
            mode = .done
            index += 1
            return Record(index: index, line: line, bytes: .failure(RecordError(description: "the export ends before its closing ] (truncated?)")))
        }
        if first == closing {
            reader.advance()
            // Anything after the array (the rest of a wrapper object) is ignored.
            mode = .done
            return nil
        }
        index += 1
        let startLine = line
        var buffer: [UInt8] = []
        var depth = 0
        var inString = false, escaped = false
        var tooLarge = false
        while let byte = reader.peek() {
            if !inString && depth == 0 && (byte == UInt8(ascii: ",") || byte == closing) {
                break
            }
            reader.advance()
            if byte == UInt8(ascii: "\n") { line += 1 }
            if buffer.count < maxRecordBytes { buffer.append(byte) } else { tooLarge = true }
            if inString {
                if escaped { escaped = false }
                else if byte == UInt8(ascii: "\\") { escaped = true }
                else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 {
                    return finish(buffer, line: startLine, tooLarge: tooLarge)
                }
            default: break
            }
        }
        if reader.peek() == nil && (depth > 0 || inString) {
            mode = .done
            return Record(index: index, line: startLine, bytes: .failure(RecordError(description: "the export ends inside this record (truncated?)")))
        }
        return finish(buffer, line: startLine, tooLarge: tooLarge)
    }

    private mutating func nextLine() -> Record? {
        var buffer: [UInt8] = []
        var tooLarge = false
        var sawByte = false
        while let byte = reader.next() {
            sawByte = true
            if byte == UInt8(ascii: "\n") {
                line += 1
                if buffer.allSatisfy(Self.isWhitespace) { buffer.removeAll(keepingCapacity: true); continue }
                index += 1
                return finish(buffer, line: line - 1, tooLarge: tooLarge)
            }
            if buffer.count < maxRecordBytes { buffer.append(byte) } else { tooLarge = true }
        }
        mode = .done
        guard sawByte, !buffer.allSatisfy(Self.isWhitespace) else { return nil }
        index += 1
        return finish(buffer, line: line, tooLarge: tooLarge)
    }

    private func finish(_ buffer: [UInt8], line: Int, tooLarge: Bool) -> Record {
        if tooLarge {
            return Record(index: index, line: line, bytes: .failure(RecordError(description: "record is larger than \(maxRecordBytes) bytes")))
        }
        return Record(index: index, line: line, bytes: .success(buffer))
    }

    private mutating func skipWhitespace() {
        // A UTF-8 byte-order mark is allowed before the first value.
        if reader.peek() == 0xEF { reader.advance(); reader.advance(); reader.advance() }
        while let byte = reader.peek(), Self.isWhitespace(byte) {
            if byte == UInt8(ascii: "\n") { line += 1 }
            reader.advance()
        }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "\"\(Character(Unicode.Scalar(byte)))\"" : String(format: "byte 0x%02X", byte)
    }
}

/// Reads a file in fixed-size chunks, a byte at a time for the parser.
final class ChunkedReader {
    private let handle: FileHandle
    private var chunk: [UInt8] = []
    private var position = 0
    private var atEnd = false
    private let chunkSize = 256 * 1024

    init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        self.handle = handle
    }

    deinit { try? handle.close() }

    @inline(__always) func peek() -> UInt8? {
        if position < chunk.count { return chunk[position] }
        return refill() ? chunk[position] : nil
    }

    @inline(__always) func advance() {
        if position < chunk.count || refill() { position += 1 }
    }

    @inline(__always) func next() -> UInt8? {
        guard let byte = peek() else { return nil }
        position += 1
        return byte
    }

    private func refill() -> Bool {
        guard !atEnd else { return false }
        let data = handle.readData(ofLength: chunkSize)
        if data.isEmpty { atEnd = true; return false }
        chunk = [UInt8](data)
        position = 0
        return true
    }
}

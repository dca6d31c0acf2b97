import AvatarCacheSupport
import Foundation

/// Splits a CSV file into rows (RFC 4180: quoted fields may hold commas, quotes doubled,
/// line breaks), a row at a time, each at most `maxRecordBytes`.
struct CSVLineReader {
    struct Row {
        var line: Int
        var fields: [String] = []
        /// Why the row could not be read.
        var problem: String?
    }

    private let reader: ChunkedReader
    private let maxRecordBytes: Int
    private var line = 1

    init(path: String, maxRecordBytes: Int) throws {
        reader = try ChunkedReader(path: path)
        self.maxRecordBytes = maxRecordBytes
    }

    mutating func next() -> Row? {
        while true {
            guard reader.peek() != nil else { return nil }
            let start = line
            var fields: [String] = []
            var field: [UInt8] = []
            var quoted = false, wasQuoted = false
            var size = 0
            var tooLarge = false
            while let byte = reader.next() {
                size += 1
                if size > maxRecordBytes { tooLarge = true }
                if quoted {
                    if byte == UInt8(ascii: "\"") {
                        if reader.peek() == UInt8(ascii: "\"") { reader.advance(); if !tooLarge { field.append(byte) } } else { quoted = false }
                    } else {
                        if byte == 10 { line += 1 }
                        if !tooLarge { field.append(byte) }
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\"") where field.isEmpty && !wasQuoted:
                    quoted = true
                    wasQuoted = true
                case UInt8(ascii: ","):
                    fields.append(String(decoding: field, as: UTF8.self))
                    field.removeAll(keepingCapacity: true)
                    wasQuoted = false
                case 10:
                    line += 1
                    return finish(start, &fields, field, tooLarge: tooLarge) ?? next()
                case 13:
                    break
                default:
                    if !tooLarge { field.append(byte) }
                }
            }
            if quoted { return Row(line: start, problem: "the file ends inside a quoted field (truncated?)") }
            return finish(start, &fields, field, tooLarge: tooLarge)
        }
    }

    /// The row, or nil for a blank line.
    private func finish(_ start: Int, _ fields: inout [String], _ field: [UInt8], tooLarge: Bool) -> Row? {
        if tooLarge { return Row(line: start, problem: "line is larger than \(maxRecordBytes) bytes") }
        fields.append(String(decoding: field, as: UTF8.self))
        if fields.count == 1 && fields[0].trimmedWhitespace.isEmpty { return nil }
        return Row(line: start, fields: fields)
    }
}

/// Reads a file in fixed-size chunks, a byte at a time for the CSV splitter.
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

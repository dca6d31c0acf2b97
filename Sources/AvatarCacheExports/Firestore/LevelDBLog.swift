import Foundation

/// Reads a LevelDB log file (the `output-N` files of a Firestore export): 32 KiB blocks of
/// records, each a 7-byte header (masked CRC-32C of type and data, length, type) and its
/// data; a record larger than what is left of a block is cut into FIRST, MIDDLE… LAST
/// fragments; fewer than 7 bytes at a block's end are padding.
///
/// Damage never stops the reading: a checksum that does not match or a length past the
/// block's end costs the rest of that block (its lengths can no longer be trusted, as
/// LevelDB's own reader does), a fragment out of order costs its record, and each is
/// yielded as `.damage` with the byte offset where it was found. Memory: one read chunk
/// and the record being put together, at most `maxRecordBytes`.
struct LevelDBLogReader {
    enum Item: Equatable {
        /// A whole record, and the offset of its (first) header.
        case record(offset: Int, bytes: [UInt8])
        case damage(offset: Int, reason: String)
    }

    static let blockSize = 32 * 1024
    static let headerSize = 7
    private static let blocksPerRead = 32

    /// The file read; nil for a log already in memory (`init(bytes:)`).
    private let handle: FileHandle?
    private let maxRecordBytes: Int
    /// Whether checksums are checked: a first look at an export (its collections) may
    /// skip them, the pass that reads it for good does not.
    private let verify: Bool
    /// The chunk read (whole blocks, the last one perhaps short at the end of the file).
    private var chunk: [UInt8] = []
    /// File offset of `chunk[0]`, and the position in it.
    private var chunkStart = 0
    private var position = 0
    private var atEnd = false
    /// The record being put together from fragments: its offset and bytes.
    private var partial: (offset: Int, bytes: [UInt8], tooLarge: Bool)?
    private var pending: [Item] = []

    init(path: String, maxRecordBytes: Int, verify: Bool = true) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        self.handle = handle
        self.maxRecordBytes = maxRecordBytes
        self.verify = verify
    }

    /// A log already in memory (a metadata file): the whole of it is the one chunk.
    init(bytes: [UInt8], maxRecordBytes: Int) {
        handle = nil
        self.maxRecordBytes = maxRecordBytes
        verify = true
        chunk = bytes
        atEnd = true
    }

    func close() { try? handle?.close() }

    /// The next record or damage report; nil at the end of the file.
    mutating func next() throws -> Item? {
        while pending.isEmpty {
            guard try step() else { break }
        }
        return pending.isEmpty ? nil : pending.removeFirst()
    }

    private mutating func refill() throws -> Bool {
        guard !atEnd, let handle else { return false }
        chunkStart += chunk.count
        let data = try handle.read(upToCount: Self.blockSize * Self.blocksPerRead) ?? Data()
        chunk = [UInt8](data)
        position = 0
        if chunk.count < Self.blockSize * Self.blocksPerRead { atEnd = true }
        return !chunk.isEmpty
    }

    /// Reads one physical record; false at the end of the file.
    private mutating func step() throws -> Bool {
        if position >= chunk.count {
            guard try refill() else {
                if let partial {
                    pending.append(.damage(offset: partial.offset, reason: "the file ends inside a record cut into fragments (truncated?); that record is lost"))
                    self.partial = nil
                }
                return false
            }
        }
        let offset = chunkStart + position
        let leftInBlock = Self.blockSize - offset % Self.blockSize
        let leftInChunk = chunk.count - position
        if leftInBlock < Self.headerSize {
            // The block's trailer: padding.
            position += min(leftInBlock, leftInChunk)
            return true
        }
        if leftInChunk < Self.headerSize {
            // Only at the end of the file (chunks hold whole blocks).
            pending.append(.damage(offset: offset, reason: "the file ends inside a record header (\(leftInChunk) of 7 bytes; truncated?)"))
            position = chunk.count
            return true
        }
        let (stored, length, type) = chunk.withUnsafeBytes { raw -> (UInt32, Int, UInt8) in
            (raw.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian,
             Int(raw.loadUnaligned(fromByteOffset: position + 4, as: UInt16.self).littleEndian),
             raw[position + 6])
        }
        if type == 0 && length == 0 {
            // Zeroes where a writer preallocated: the rest of the block is empty.
            position += min(leftInBlock, leftInChunk)
            return true
        }
        let end = position + Self.headerSize + length
        if Self.headerSize + length > leftInBlock || end > chunk.count {
            if end > chunk.count && atEnd && Self.headerSize + length <= leftInBlock {
                // Cut short: one report, for the record it belongs to.
                let start = partial?.offset ?? offset
                let what = partial == nil ? "a record of \(length) bytes" : "a record cut into fragments"
                partial = nil
                pending.append(.damage(offset: start, reason: "the file ends inside \(what) (truncated?); that record is lost"))
            } else {
                pending.append(.damage(offset: offset, reason: "a record length (\(length) bytes) runs past the end of its 32 KiB block; the rest of the block is skipped"))
                dropPartial()
            }
            position += min(leftInBlock, leftInChunk)
            return true
        }
        let crc = verify ? chunk.withUnsafeBytes { raw in
            CRC32C.masked(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(position + 6)..<end])))
        } : stored
        guard crc == stored else {
            pending.append(.damage(offset: offset, reason: "checksum mismatch; the rest of the block is skipped"))
            dropPartial()
            position += min(leftInBlock, leftInChunk)
            return true
        }
        let data = chunk[(position + Self.headerSize)..<end]
        position = end
        switch type {
        case 1: // FULL
            dropPartial()
            if data.count > maxRecordBytes {
                pending.append(.damage(offset: offset, reason: "record is larger than \(maxRecordBytes) bytes"))
            } else {
                pending.append(.record(offset: offset, bytes: Array(data)))
            }
        case 2: // FIRST
            dropPartial()
            partial = (offset, Array(data.prefix(maxRecordBytes)), data.count > maxRecordBytes)
        case 3, 4: // MIDDLE, LAST
            guard var record = partial else {
                pending.append(.damage(offset: offset, reason: "a \(type == 3 ? "middle" : "last") fragment without the first one; skipped"))
                return true
            }
            if !record.tooLarge {
                if record.bytes.count + data.count > maxRecordBytes {
                    record.tooLarge = true
                    record.bytes = []
                } else {
                    record.bytes.append(contentsOf: data)
                }
            }
            partial = record
            if type == 4 {
                partial = nil
                if record.tooLarge {
                    pending.append(.damage(offset: record.offset, reason: "record is larger than \(maxRecordBytes) bytes"))
                } else {
                    pending.append(.record(offset: record.offset, bytes: record.bytes))
                }
            }
        default:
            dropPartial()
            pending.append(.damage(offset: offset, reason: "unknown record type \(type); skipped"))
        }
        return true
    }

    /// A record put together from fragments that will not be finished.
    private mutating func dropPartial() {
        guard let partial else { return }
        pending.append(.damage(offset: partial.offset, reason: "a record cut into fragments has no last fragment; that record is lost"))
        self.partial = nil
    }
}

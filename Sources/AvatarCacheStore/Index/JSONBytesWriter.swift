import AvatarCacheSupport
import Foundation

/// Appends JSON to a byte buffer, in exactly the form JSONEncoder gives it (compact, keys
/// sorted by their UTF-8 bytes, strings escaped as with `.withoutEscapingSlashes`, dates
/// as `ISO8601.format`): `metadata.json`'s entries are written with it, and the tests hold
/// the two byte for byte equal. By hand because JSONEncoder was half of an evicting
/// prune (docs/performance-notes.md, "JSONBytesWriter").
struct JSONBytesWriter {
    var bytes: [UInt8] = []
    /// Where full buffers go (see `flushIfFull`); nil keeps everything in `bytes`.
    private let sink: ((UnsafeRawBufferPointer) -> Bool)?
    /// The sink refused a piece: what follows is dropped.
    private(set) var failed = false
    private static let pieceSize = 1 << 20

    init(capacity: Int = 1 << 16, sink: ((UnsafeRawBufferPointer) -> Bool)? = nil) {
        self.sink = sink
        bytes.reserveCapacity(sink == nil ? capacity : Self.pieceSize + (1 << 16))
    }

    /// Hands the buffer to the sink once it holds a piece's worth.
    mutating func flushIfFull() {
        if sink != nil, bytes.count >= Self.pieceSize { flush() }
    }

    /// Hands whatever is buffered to the sink.
    mutating func flush() {
        guard let sink else { return }
        if !failed { failed = !bytes.withUnsafeBytes(sink) }
        bytes.removeAll(keepingCapacity: true)
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// `"key":`, preceded by a comma unless it is the object's first.
    mutating func key(_ key: StaticString, first: inout Bool) {
        if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        raw(key)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func key(_ key: String, first: inout Bool) {
        if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(utf8: $0) }
    }

    /// A string given as its UTF-8 bytes (a column SQLite hands over), escaped as `string`.
    mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var start = 0
        for index in 0..<utf8.count {
            let byte = utf8[index]
            guard byte == 0x22 || byte == 0x5C || byte < 0x20 else { continue }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
            start = index + 1
            bytes.append(0x5C)
            switch byte {
            case 0x22: bytes.append(0x22)
            case 0x5C: bytes.append(0x5C)
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            default:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            }
        }
        if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `"key":` for a key given as its UTF-8 bytes, preceded by a comma unless it is the
    /// object's first.
    mutating func key(utf8: UnsafeBufferPointer<UInt8>, first: inout Bool) {
        if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
        string(utf8: utf8)
        bytes.append(UInt8(ascii: ":"))
    }

    /// A date as a string, in `ISO8601.format`'s form.
    mutating func date(_ value: Date) {
        bytes.append(UInt8(ascii: "\""))
        ISO8601.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func int<T: BinaryInteger>(_ value: T) {
        var magnitude = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(48 + Int(magnitude % 10))
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }
}

extension JSONBytesWriter {
    /// One entry, as JSONEncoder writes a `CacheEntry` with sorted keys.
    mutating func entry(_ entry: CacheEntry) {
        var first = true
        raw("{")
        key("contentSHA256", first: &first); string(entry.contentSHA256)
        if let etag = entry.etag { key("etag", first: &first); string(etag) }
        key("fetchedAt", first: &first); date(entry.fetchedAt)
        key("fileSize", first: &first); int(entry.fileSize)
        key("filename", first: &first); string(entry.filename)
        key("files", first: &first)
        raw("{")
        var firstTier = true
        for tier in entry.files.keys.sorted(by: JSONBytesWriter.precedes) {
            let file = entry.files[tier]!
            key(tier, first: &firstTier)
            var firstField = true
            raw("{")
            key("fileSize", first: &firstField); int(file.fileSize)
            key("filename", first: &firstField); string(file.filename)
            key("height", first: &firstField); int(file.height)
            if let sha256 = file.sha256 { key("sha256", first: &firstField); string(sha256) }
            key("width", first: &firstField); int(file.width)
            raw("}")
        }
        raw("}")
        if let freshUntil = entry.freshUntil { key("freshUntil", first: &first); date(freshUntil) }
        key("kind", first: &first); string(entry.kind.rawValue)
        key("lastAccess", first: &first); date(entry.lastAccess)
        if let lastModified = entry.lastModified { key("lastModified", first: &first); string(lastModified) }
        if let placeholder = entry.placeholder {
            key("placeholder", first: &first)
            var firstField = true
            raw("{")
            key("color", first: &firstField); string(placeholder.color)
            if let hash = placeholder.thumbHash { key("thumbHash", first: &firstField); string(hash) }
            raw("}")
        }
        if let sourceBytes = entry.sourceBytes { key("sourceBytes", first: &first); int(sourceBytes) }
        if let sourceFormat = entry.sourceFormat { key("sourceFormat", first: &first); string(sourceFormat.rawValue) }
        if let sourceHeight = entry.sourceHeight { key("sourceHeight", first: &first); int(sourceHeight) }
        if let sourceWidth = entry.sourceWidth { key("sourceWidth", first: &first); int(sourceWidth) }
        raw("}")
    }

    /// Byte order of the UTF-8, as JSONEncoder's `.sortedKeys` orders keys.
    static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}

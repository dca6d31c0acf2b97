import Foundation

/// `metadata.json` written and read by hand, in exactly the form JSONEncoder gives it
/// (compact, keys sorted by their UTF-8 bytes, slashes unescaped, dates as
/// `ISO8601.format`): the tests hold the two outputs byte for byte equal.
///
/// The reader is the fast path only. Keys may come in any order and unknown keys are
/// skipped, but anything else it does not expect (a wrong type, a missing field, another
/// schema version, broken syntax) makes it return nil, and `CacheDirectory` then reads
/// the file with JSONDecoder, which explains what is wrong.
enum MetadataCodec {
    // MARK: Write

    static func encode(_ metadata: CacheMetadata) -> [UInt8] {
        var writer = JSONBytesWriter(capacity: 1024 + metadata.entries.count * 900 + metadata.profiles.count * 450)
        write(metadata, into: &writer)
        return writer.bytes
    }

    /// Encodes piece by piece into `sink`; false when the sink refused a piece.
    static func encode(_ metadata: CacheMetadata, to sink: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        withoutActuallyEscaping(sink) { sink in
            var writer = JSONBytesWriter(sink: sink)
            write(metadata, into: &writer)
            writer.flush()
            return !writer.failed
        }
    }

    private static func write(_ metadata: CacheMetadata, into writer: inout JSONBytesWriter) {
        var first = true
        writer.raw("{")
        writer.key("entries", first: &first)
        writeDictionary(metadata.entries, into: &writer) { writeEntry($0, into: &$1) }
        writer.key("failures", first: &first)
        writeDictionary(metadata.failures, into: &writer) { writeFailure($0, into: &$1) }
        writer.key("generator", first: &first)
        writer.string(metadata.generator)
        writer.key("profiles", first: &first)
        writeDictionary(metadata.profiles, into: &writer) { writeProfile($0, into: &$1) }
        writer.key("schemaVersion", first: &first)
        writer.int(metadata.schemaVersion)
        writer.key("updatedAt", first: &first)
        writer.date(metadata.updatedAt)
        writer.raw("}")
    }

    /// Byte order of the UTF-8, as JSONEncoder's `.sortedKeys` orders them.
    static func precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                if common > 0, let xb = x.baseAddress, let yb = y.baseAddress {
                    let order = memcmp(xb, yb, common)
                    if order != 0 { return order < 0 }
                }
                return x.count < y.count
            }
        }
    }

    private static func writeDictionary<Value>(_ dictionary: [String: Value], into writer: inout JSONBytesWriter,
                                               _ value: (Value, inout JSONBytesWriter) -> Void) {
        writer.raw("{")
        var first = true
        if dictionary.count <= 2 {
            // The per-tier maps of every entry and profile: no array, no sort.
            var pairs = dictionary.makeIterator()
            if let one = pairs.next() {
                if let two = pairs.next() {
                    let (a, b) = precedes(one.key, two.key) ? (one, two) : (two, one)
                    writer.key(a.key, first: &first); value(a.value, &writer)
                    writer.key(b.key, first: &first); value(b.value, &writer)
                } else {
                    writer.key(one.key, first: &first); value(one.value, &writer)
                }
            }
        } else {
            // Keys sorted with their positions: no value is copied or moved by the sort,
            // and no key hashed again.
            var order = Array(zip(dictionary.keys, dictionary.indices))
            order.sort { precedes($0.0, $1.0) }
            for (key, index) in order {
                writer.key(key, first: &first)
                value(dictionary.values[index], &writer)
                writer.flushIfFull()
            }
        }
        writer.raw("}")
    }

    private static func writeEntry(_ entry: CacheEntry, into writer: inout JSONBytesWriter) {
        var first = true
        writer.raw("{")
        writer.key("contentSHA256", first: &first); writer.string(entry.contentSHA256)
        if let etag = entry.etag { writer.key("etag", first: &first); writer.string(etag) }
        writer.key("fetchedAt", first: &first); writer.date(entry.fetchedAt)
        writer.key("fileSize", first: &first); writer.int(entry.fileSize)
        writer.key("filename", first: &first); writer.string(entry.filename)
        writer.key("files", first: &first)
        writeDictionary(entry.files, into: &writer) { file, writer in
            var first = true
            writer.raw("{")
            writer.key("fileSize", first: &first); writer.int(file.fileSize)
            writer.key("filename", first: &first); writer.string(file.filename)
            writer.key("height", first: &first); writer.int(file.height)
            if let sha256 = file.sha256 { writer.key("sha256", first: &first); writer.string(sha256) }
            writer.key("width", first: &first); writer.int(file.width)
            writer.raw("}")
        }
        if let freshUntil = entry.freshUntil { writer.key("freshUntil", first: &first); writer.date(freshUntil) }
        writer.key("kind", first: &first); writer.string(entry.kind.rawValue)
        writer.key("lastAccess", first: &first); writer.date(entry.lastAccess)
        if let lastModified = entry.lastModified { writer.key("lastModified", first: &first); writer.string(lastModified) }
        if let sourceBytes = entry.sourceBytes { writer.key("sourceBytes", first: &first); writer.int(sourceBytes) }
        if let sourceFormat = entry.sourceFormat { writer.key("sourceFormat", first: &first); writer.string(sourceFormat.rawValue) }
        if let sourceHeight = entry.sourceHeight { writer.key("sourceHeight", first: &first); writer.int(sourceHeight) }
        if let sourceWidth = entry.sourceWidth { writer.key("sourceWidth", first: &first); writer.int(sourceWidth) }
        writer.raw("}")
    }

    private static func writeProfile(_ profile: CachedProfile, into writer: inout JSONBytesWriter) {
        var first = true
        writer.raw("{")
        writer.key("avatarColorHex", first: &first); writer.string(profile.avatarColorHex)
        if let access = profile.cachedImageLastAccess { writer.key("cachedImageLastAccess", first: &first); writer.date(access) }
        writer.key("cachedImagePath", first: &first)
        writeDictionary(profile.cachedImagePath, into: &writer) { name, writer in writer.string(name) }
        writer.key("cachedInitials", first: &first); writer.string(profile.cachedInitials)
        writer.key("displayName", first: &first); writer.string(profile.displayName)
        if let glyph = profile.glyph { writer.key("glyph", first: &first); writer.string(glyph.rawValue) }
        writer.key("kind", first: &first); writer.string(profile.kind.rawValue)
        writer.key("lastSeen", first: &first); writer.date(profile.lastSeen)
        writer.key("monogramSource", first: &first); writer.string(profile.monogramSource)
        if let photoSource = profile.photoSource { writer.key("photoSource", first: &first); writer.string(photoSource) }
        writer.key("textColorHex", first: &first); writer.string(profile.textColorHex)
        writer.raw("}")
    }

    private static func writeFailure(_ failure: FailureRecord, into writer: inout JSONBytesWriter) {
        var first = true
        writer.raw("{")
        writer.key("class", first: &first); writer.string(failure.failureClass.rawValue)
        writer.key("failedAt", first: &first); writer.date(failure.failedAt)
        writer.key("reason", first: &first); writer.string(failure.reason)
        writer.key("retryAfter", first: &first); writer.date(failure.retryAfter)
        writer.raw("}")
    }

    // MARK: Read

    static func decode(_ bytes: UnsafeRawBufferPointer) -> CacheMetadata? {
        var reader = JSONBytesReader(bytes)
        var version: Int?, generator: String?, updatedAt: Date?
        var entries: [String: CacheEntry]?, profiles: [String: CachedProfile] = [:], failures: [String: FailureRecord] = [:]
        let ok = reader.object { reader, key in
            switch key {
            case "schemaVersion": version = reader.int(); return version != nil
            case "generator": generator = reader.string(); return generator != nil
            case "updatedAt": updatedAt = reader.date(); return updatedAt != nil
            case "entries": entries = dictionary(&reader, entry); return entries != nil
            case "profiles":
                if reader.null() { return true }
                guard let read = dictionary(&reader, profile) else { return false }
                profiles = read
                return true
            case "failures":
                if reader.null() { return true }
                guard let read = dictionary(&reader, failure) else { return false }
                failures = read
                return true
            default: return reader.skipValue()
            }
        }
        guard ok, reader.atEnd, version == CacheMetadata.currentSchemaVersion,
              let generator, let updatedAt, let entries else { return nil }
        var metadata = CacheMetadata(entries: entries, profiles: profiles, updatedAt: updatedAt)
        metadata.generator = generator
        metadata.failures = failures
        return metadata
    }

    private static func dictionary<Value>(_ reader: inout JSONBytesReader, _ value: (inout JSONBytesReader) -> Value?) -> [String: Value]? {
        var result: [String: Value] = [:]
        let ok = reader.object { reader, key in
            guard let item = value(&reader) else { return false }
            result[key] = item
            return true
        }
        return ok ? result : nil
    }

    /// An optional field: `.some(nil)` for null, nil when the value is not readable.
    private static func optional<T>(_ reader: inout JSONBytesReader, _ read: (inout JSONBytesReader) -> T?) -> T?? {
        if reader.null() { return .some(nil) }
        guard let value = read(&reader) else { return nil }
        return .some(value)
    }

    private static func entry(_ reader: inout JSONBytesReader) -> CacheEntry? {
        var kind: AvatarKind?, filename: String?, lastAccess: Date?, fileSize: Int?, content: String?
        var sourceBytes: Int?, sourceFormat: ImageFormat?, sourceWidth: Int?, sourceHeight: Int?
        var fetchedAt: Date?, freshUntil: Date?, etag: String?, lastModified: String?, files: [String: CacheFile]?
        let ok = reader.object { reader, key in
            switch key {
            case "kind": kind = reader.string().flatMap(AvatarKind.init(rawValue:)); return kind != nil
            case "filename": filename = reader.string(); return filename != nil
            case "lastAccess": lastAccess = reader.date(); return lastAccess != nil
            case "fileSize": fileSize = reader.int(); return fileSize != nil
            case "contentSHA256": content = reader.string(); return content != nil
            case "fetchedAt": fetchedAt = reader.date(); return fetchedAt != nil
            case "files": files = dictionary(&reader, file); return files != nil
            case "sourceBytes": guard let value = optional(&reader, { $0.int() }) else { return false }; sourceBytes = value
            case "sourceWidth": guard let value = optional(&reader, { $0.int() }) else { return false }; sourceWidth = value
            case "sourceHeight": guard let value = optional(&reader, { $0.int() }) else { return false }; sourceHeight = value
            case "sourceFormat":
                guard let value = optional(&reader, { $0.string().flatMap(ImageFormat.init(rawValue:)) }) else { return false }
                sourceFormat = value
            case "freshUntil": guard let value = optional(&reader, { $0.date() }) else { return false }; freshUntil = value
            case "etag": guard let value = optional(&reader, { $0.string() }) else { return false }; etag = value
            case "lastModified": guard let value = optional(&reader, { $0.string() }) else { return false }; lastModified = value
            default: return reader.skipValue()
            }
            return true
        }
        guard ok, let kind, let filename, let lastAccess, let fileSize, let content, let fetchedAt, let files else { return nil }
        return CacheEntry(kind: kind, filename: filename, lastAccess: lastAccess, fileSize: Int64(fileSize), contentSHA256: content,
                          sourceBytes: sourceBytes, sourceFormat: sourceFormat, sourceWidth: sourceWidth, sourceHeight: sourceHeight,
                          fetchedAt: fetchedAt, freshUntil: freshUntil, etag: etag, lastModified: lastModified, files: files)
    }

    private static func file(_ reader: inout JSONBytesReader) -> CacheFile? {
        var filename: String?, width: Int?, height: Int?, fileSize: Int?, sha256: String?
        let ok = reader.object { reader, key in
            switch key {
            case "filename": filename = reader.string(); return filename != nil
            case "width": width = reader.int(); return width != nil
            case "height": height = reader.int(); return height != nil
            case "fileSize": fileSize = reader.int(); return fileSize != nil
            case "sha256": guard let value = optional(&reader, { $0.string() }) else { return false }; sha256 = value; return true
            default: return reader.skipValue()
            }
        }
        guard ok, let filename, let width, let height, let fileSize else { return nil }
        return CacheFile(filename: filename, width: width, height: height, fileSize: Int64(fileSize), sha256: sha256)
    }

    private static func profile(_ reader: inout JSONBytesReader) -> CachedProfile? {
        var displayName: String?, initials: String?, glyph: MonogramGlyph?, colour: String?, textColour: String?
        var photoSource: String?, monogramSource: String?, kind: AvatarKind?, paths: [String: String]?
        var lastAccess: Date?, lastSeen: Date?
        let ok = reader.object { reader, key in
            switch key {
            case "displayName": displayName = reader.string(); return displayName != nil
            case "cachedInitials": initials = reader.string(); return initials != nil
            case "avatarColorHex": colour = reader.string(); return colour != nil
            case "textColorHex": textColour = reader.string(); return textColour != nil
            case "monogramSource": monogramSource = reader.string(); return monogramSource != nil
            case "kind": kind = reader.string().flatMap(AvatarKind.init(rawValue:)); return kind != nil
            case "cachedImagePath": paths = dictionary(&reader) { $0.string() }; return paths != nil
            case "lastSeen": lastSeen = reader.date(); return lastSeen != nil
            case "glyph":
                guard let value = optional(&reader, { $0.string().flatMap(MonogramGlyph.init(rawValue:)) }) else { return false }
                glyph = value
            case "photoSource": guard let value = optional(&reader, { $0.string() }) else { return false }; photoSource = value
            case "cachedImageLastAccess": guard let value = optional(&reader, { $0.date() }) else { return false }; lastAccess = value
            default: return reader.skipValue()
            }
            return true
        }
        guard ok, let displayName, let initials, let colour, let textColour, let monogramSource, let kind, let paths, let lastSeen else { return nil }
        return CachedProfile(displayName: displayName, cachedInitials: initials, glyph: glyph, avatarColorHex: colour,
                             textColorHex: textColour, photoSource: photoSource, monogramSource: monogramSource, kind: kind,
                             cachedImagePath: paths, cachedImageLastAccess: lastAccess, lastSeen: lastSeen)
    }

    private static func failure(_ reader: inout JSONBytesReader) -> FailureRecord? {
        var failureClass: FailureClass?, reason: String?, failedAt: Date?, retryAfter: Date?
        let ok = reader.object { reader, key in
            switch key {
            case "class": failureClass = reader.string().flatMap(FailureClass.init(rawValue:)); return failureClass != nil
            case "reason": reason = reader.string(); return reason != nil
            case "failedAt": failedAt = reader.date(); return failedAt != nil
            case "retryAfter": retryAfter = reader.date(); return retryAfter != nil
            default: return reader.skipValue()
            }
        }
        guard ok, let failureClass, let reason, let failedAt, let retryAfter else { return nil }
        return FailureRecord(failureClass: failureClass, reason: reason, failedAt: failedAt, retryAfter: retryAfter)
    }
}

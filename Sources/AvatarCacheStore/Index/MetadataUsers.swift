import AvatarCacheModel
import AvatarCacheMonograms
internal import GRDB

/// `metadata.json`'s `users`: every profile of the index, in id order, as
/// `MetadataDocument.User` encodes it (JSONEncoder's sorted keys, nulls omitted), with
/// what `ProfileRecords.shown` decides for it: the photo's entry when cached, else the
/// monogram's, else none. One query walks the profiles (the photo's entry asked in it);
/// the monogram entries, a few thousand at most (bounded by the budget), are read once.
///
/// Walked through `RawStatement`, the column bytes copied straight into the document:
/// a million profiles are a million rows each time the document is written.
enum MetadataUsers {
    static func write(from db: Database, into writer: inout JSONBytesWriter) throws {
        // The walk reads every profile page once: through SQLite's default 2 MB of cache,
        // not a maintenance connection's 32 MB, which a million profiles' pages fill and
        // keep (30 MB more of a million-profile warm's peak, measured).
        let cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
        try db.execute(sql: "PRAGMA cache_size = -2000")
        defer { try? db.execute(sql: "PRAGMA cache_size = \(cacheSize)") }
        var monograms = Set<[UInt8]>()
        let cachedMonograms = try RawStatement(db, sql: "SELECT key FROM entry WHERE key >= 'monogram:' AND key < 'monogram;'")
        try cachedMonograms.forEachRow { row in
            monograms.insert(Array(row.bytes(0)))
            return .next
        }
        let profiles = try RawStatement(db, sql: """
            SELECT p.id, p.displayName, p.initials, p.glyph, p.color, p.photoSource,
                   p.photoSource IS NOT NULL AND EXISTS (SELECT 1 FROM entry e WHERE e.key = p.photoSource)
            FROM profile p ORDER BY p.id
            """)
        var textColors: [String: String] = [:]
        var monogramKey: [UInt8] = []
        monogramKey.reserveCapacity(128)
        var firstUser = true
        writer.raw("{")
        try profiles.forEachRow { row in
            let color = row.bytes(4)
            let colorText = String(decoding: color, as: UTF8.self)
            let textColor: String
            if let known = textColors[colorText] {
                textColor = known
            } else {
                textColor = AvatarColor.textColor(on: colorText)
                textColors[colorText] = textColor
            }
            let glyph = String(decoding: row.bytes(3), as: UTF8.self)
            let knownGlyph = MonogramGlyph(rawValue: glyph)
            let initials = row.bytes(2)
            let photo = row.bytes(5)
            let photoCached = row.int(6) != 0
            // What the profile shows: `ProfileRecord.monogram.key` made of the row's bytes.
            var kind = AvatarKind.notCached
            if photoCached {
                kind = .photo
            } else {
                monogramKey.removeAll(keepingCapacity: true)
                monogramKey.append(contentsOf: "monogram:v1:".utf8)
                if knownGlyph != nil {
                    monogramKey.append(contentsOf: "glyph=".utf8)
                    monogramKey.append(contentsOf: glyph.utf8)
                } else if initials.isEmpty {
                    monogramKey.append(contentsOf: Initials.unknown.utf8)
                } else {
                    monogramKey.append(contentsOf: initials)
                }
                monogramKey.append(UInt8(ascii: ":"))
                monogramKey.append(contentsOf: color)
                monogramKey.append(UInt8(ascii: ":"))
                monogramKey.append(contentsOf: textColor.utf8)
                if monograms.contains(monogramKey) { kind = .monogram }
            }
            writer.key(utf8: row.bytes(0), first: &firstUser)
            var first = true
            writer.raw("{")
            writer.key("color", first: &first); writer.string(utf8: color)
            let displayName = row.bytes(1)
            if !displayName.isEmpty { writer.key("displayName", first: &first); writer.string(utf8: displayName) }
            switch kind {
            case .photo: writer.key("entry", first: &first); writer.string(utf8: photo)
            case .monogram: writer.key("entry", first: &first); monogramKey.withUnsafeBufferPointer { writer.string(utf8: $0) }
            case .notCached: break
            }
            if let knownGlyph { writer.key("glyph", first: &first); writer.string(knownGlyph.rawValue) }
            writer.key("initials", first: &first); writer.string(utf8: initials)
            writer.key("kind", first: &first); writer.string(kind.rawValue)
            if kind != .photo, !row.isNull(5) { writer.key("photo", first: &first); writer.string(utf8: photo) }
            writer.key("textColor", first: &first); writer.string(textColor)
            writer.raw("}")
            writer.flushIfFull()
            return .next
        }
        writer.raw("}")
    }
}

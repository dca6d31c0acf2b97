import Foundation
import GRDB

/// The `profile` table: per user id, what to draw (the sender of a notification banner). What a profile *shows*
/// (its photo's files, else its monogram's, else nothing) is not stored: it is read from
/// the entries when asked, so an eviction never leaves a profile pointing at a deleted
/// file. The text colour and the monogram's key follow from the stored fields.
enum ProfileRecords {
    /// A stored profile.
    struct Row: Sendable, Equatable {
        var id: String
        var displayName: String
        var initials: String
        var glyph: MonogramGlyph?
        var color: String
        var photoSource: String?
        var updatedAt: Date

        var textColor: String { AvatarColor.textColor(on: color) }
        var monogram: MonogramSpec {
            MonogramSpec(initials: initials, glyph: glyph, background: color, foreground: textColor)
        }
    }

    static let columns = "id, displayName, initials, glyph, color, photoSource, updatedAt"

    static func row(_ row: GRDB.Row) -> Row {
        Row(id: row[0], displayName: row[1], initials: row[2], glyph: (row[3] as String?).flatMap(MonogramGlyph.init(rawValue:)),
            color: row[4], photoSource: row[5], updatedAt: Date(indexValue: row[6]))
    }

    static func profile(_ db: Database, id: String) throws -> Row? {
        try GRDB.Row.fetchOne(db.cachedStatement(sql: "SELECT \(columns) FROM profile WHERE id = ?"), arguments: [id]).map(row)
    }

    /// The first user (by id) whose photo is `source`.
    static func owner(_ db: Database, ofSource source: String) throws -> Row? {
        try GRDB.Row.fetchOne(db.cachedStatement(sql: "SELECT \(columns) FROM profile WHERE photoSource = ? ORDER BY id LIMIT 1"), arguments: [source]).map(row)
    }

    /// Stores what an export says of a user. The colour is kept once assigned: the
    /// export's own colour wins, else the stored one, else the palette's by a stable hash.
    /// A row whose fields did not change is not written.
    static let saveSQL = """
        INSERT INTO profile (\(columns), readOrder) VALUES (?1, ?2, ?3, ?4, COALESCE(?5, ?6), ?7, ?8, ?9)
        ON CONFLICT(id) DO UPDATE SET
            displayName = excluded.displayName, initials = excluded.initials, glyph = excluded.glyph,
            color = COALESCE(?5, color), photoSource = excluded.photoSource, updatedAt = excluded.updatedAt,
            readOrder = excluded.readOrder
        WHERE displayName IS NOT excluded.displayName OR initials IS NOT excluded.initials
            OR glyph IS NOT excluded.glyph OR photoSource IS NOT excluded.photoSource
            OR (?5 IS NOT NULL AND color IS NOT ?5)
        """

    /// Binds `saveSQL`'s arguments for `profile`, read at position `readOrder` of the run.
    static func bindSave(_ statement: RawStatement, _ profile: Profile, at date: Date, readOrder: Int) {
        statement.bind(1, profile.id)
        statement.bind(2, profile.displayName)
        statement.bind(3, profile.glyph == nil ? profile.initials : "")
        statement.bind(4, profile.glyph?.rawValue)
        statement.bind(5, profile.colorHex)
        statement.bind(6, AvatarColor.paletteColor(forUserID: profile.id))
        statement.bind(7, profile.photo?.key)
        statement.bind(8, date.indexValue)
        statement.bind(9, readOrder)
    }

    /// Stores a profile as it is (the import of an older cache).
    static func insert(_ db: Database, _ row: Row) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO profile (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?)").execute(arguments: [
            row.id, row.displayName, row.initials, row.glyph?.rawValue, row.color, row.photoSource, row.updatedAt.indexValue,
        ])
    }

    static func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM profile") ?? 0
    }

    /// What a profile shows now: its photo's entry if cached, else its monogram's, else
    /// nothing.
    static func shown(_ db: Database, _ profile: Row) throws -> (kind: AvatarKind, key: String?, entry: CacheEntry?) {
        if let photo = profile.photoSource, let entry = try EntryRecords.entry(db, key: photo) {
            return (.photo, photo, entry)
        }
        let monogram = profile.monogram.key
        if let entry = try EntryRecords.entry(db, key: monogram) {
            return (.monogram, monogram, entry)
        }
        return (.none, nil, nil)
    }

    /// Every profile in id order, one at a time.
    static func forEach(_ db: Database, _ body: (Row) throws -> Void) throws {
        let rows = try GRDB.Row.fetchCursor(db, sql: "SELECT \(columns) FROM profile ORDER BY id")
        while let next = try rows.next() { try body(row(next)) }
    }
}

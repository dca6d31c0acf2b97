import AvatarCacheModel
import AvatarCacheMonograms
import Foundation
internal import GRDB

/// The `profile` table (`ProfileRecord`): per user id, what to draw (the sender of a
/// notification banner).
enum ProfileRecords {
    static func profile(_ db: Database, id: String) throws -> ProfileRecord? {
        try ProfileRecord.fetchOne(db.cachedStatement(sql: "SELECT * FROM profile WHERE id = ?"), arguments: [id])
    }

    /// The first user (by id) whose photo is `source`.
    static func owner(_ db: Database, ofSource source: String) throws -> ProfileRecord? {
        try ProfileRecord.filter(ProfileRecord.Columns.photoSource == source).order(ProfileRecord.Columns.id).fetchOne(db)
    }

    /// Stores what an export says of a user. The colour is kept once assigned: the
    /// export's own colour wins, else the stored one, else the palette's by a stable hash.
    /// A row whose fields did not change is not written. An upsert with conditions no
    /// record method has, run once per export record through `RawStatement`
    /// (`RunTables.RecordWriter`), its columns those of `ProfileRecord.Columns`.
    static let saveSQL = """
        INSERT INTO profile (id, displayName, initials, glyph, color, photoSource, updatedAt, readOrder) VALUES (?1, ?2, ?3, ?4, COALESCE(?5, ?6), ?7, ?8, ?9)
        ON CONFLICT(id) DO UPDATE SET
            displayName = excluded.displayName, initials = excluded.initials, glyph = excluded.glyph,
            color = COALESCE(?5, color), photoSource = excluded.photoSource, updatedAt = excluded.updatedAt,
            readOrder = excluded.readOrder
        WHERE displayName IS NOT excluded.displayName OR initials IS NOT excluded.initials
            OR glyph IS NOT excluded.glyph OR photoSource IS NOT excluded.photoSource
            OR (?5 IS NOT NULL AND color IS NOT ?5)
        """

    /// A profile's stored fields, in `isStored`'s order.
    static let storedSQL = "SELECT displayName, initials, glyph, color, photoSource FROM profile WHERE id = ?"

    /// Whether `storedSQL`'s row (stepped, for `profile.id`) is what `saveSQL` would leave
    /// as it is: a record that changes nothing is told apart by reading its row, without
    /// the upsert or the palette's hash it binds (a re-run's million records).
    static func isStored(_ row: RawStatement.Columns, _ profile: Profile) -> Bool {
        row.holds(0, profile.displayName) && row.holds(1, profile.glyph == nil ? profile.initials : "")
            && row.holds(2, profile.glyph?.rawValue) && row.holds(4, profile.photo?.key)
            && (profile.colorHex == nil || row.holds(3, profile.colorHex))
    }

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
    static func insert(_ db: Database, _ profile: ProfileRecord) throws {
        try profile.insert(db, onConflict: .replace)
    }

    static func count(_ db: Database) throws -> Int {
        try ProfileRecord.fetchCount(db)
    }

    /// What a profile shows now: its photo's entry if cached, else its monogram's, else
    /// nothing.
    static func shown(_ db: Database, _ profile: ProfileRecord) throws -> (kind: AvatarKind, key: String?, entry: CacheEntry?) {
        if let photo = profile.photoSource, let entry = try EntryRecords.entry(db, key: photo) {
            return (.photo, photo, entry)
        }
        let monogram = profile.monogram.key
        if let entry = try EntryRecords.entry(db, key: monogram) {
            return (.monogram, monogram, entry)
        }
        return (.notCached, nil, nil)
    }

    /// Every profile in id order, one at a time.
    static func forEach(_ db: Database, _ body: (ProfileRecord) throws -> Void) throws {
        let profiles = try ProfileRecord.order(ProfileRecord.Columns.id).fetchCursor(db)
        while let profile = try profiles.next() { try body(profile) }
    }
}

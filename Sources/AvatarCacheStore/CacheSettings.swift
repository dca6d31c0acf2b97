import AvatarCacheModel
internal import GRDB

/// The `cacheSetting` table: a few named values about the cache itself.
enum CacheSettings {
    /// A random id, made with the table: names a merged cache that is not a shard.
    static let id = "id"
    /// `i/n` when the last run took one shard of a split run (`--shard`).
    static let shard = "shard"
    /// The device, inode, size and modification time of the metadata.json a warm last
    /// wrote durably: unchanged, and nothing a reader finds changed, a run need not write
    /// it again (`MetadataRefresh`).
    static let metadataStamp = "metadataStamp"
    /// The budget in bytes (decimal) and the trim ratio the last writer given them was
    /// given: every later command not given its own uses them (`Pruner.kept`). A cache
    /// without them keeps the defaults.
    static let budget = "budgetBytes"
    static let trimRatio = "trimRatio"
    /// The decode sizes in points the last warm was given (`DecodeSizes`' text). A cache
    /// without it was warmed with the defaults (110 and 300).
    static let decodeSizes = "decodeSizes"

    /// `decodeSizes` as numbers; nil when absent or not a list of sizes.
    static func decodeSizes(_ db: Database) throws -> [Int]? {
        try value(db, decodeSizes).flatMap(DecodeSizes.parse)
    }

    static func value(_ db: Database, _ name: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM cacheSetting WHERE name = ?"), arguments: [name])
    }

    /// Sets a value, or removes it when nil.
    static func set(_ db: Database, _ name: String, to value: String?) throws {
        if let value {
            try db.execute(sql: "INSERT OR REPLACE INTO cacheSetting (name, value) VALUES (?, ?)", arguments: [name, value])
        } else {
            try db.execute(sql: "DELETE FROM cacheSetting WHERE name = ?", arguments: [name])
        }
    }
}

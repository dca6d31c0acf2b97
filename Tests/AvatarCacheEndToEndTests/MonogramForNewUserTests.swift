import Foundation
import Testing
import AvatarCacheLookup
import AvatarCacheTestKit

/// A user the cache does not hold yet (a new sender) is drawn as a warm would draw them:
/// `CacheLookup.monogram(forUser:displayName:colorHex:)` against the answers of a real warm
/// (the built binary) for the same ids and names.
@Suite struct MonogramForNewUserTests {
    @Test func theMonogramOfAUserNotCachedIsTheOneAWarmGives() throws {
        let directory = try Fixtures.temporaryDirectory("monogram-new-user")
        defer { try? FileManager.default.removeItem(at: directory) }
        let users: [(id: String, name: String, color: String?)] = [
            ("u1", "Bob Smith Jr.", nil), ("u2", "Alice", nil), ("u3", "Émile Zola", "#123456"), ("u4", "J", nil),
            ("u5", "", nil), ("u6", "李小龍", nil), ("u7", "Dr. Ana María López", "not a colour"),
        ]
        let records = users.map { user -> [String: String] in
            var record = ["id": user.id, "displayName": user.name, "email": "\(user.id)@example.com"]
            if let color = user.color { record["avatarColorHex"] = color }
            return record
        }
        let export = directory.appendingPathComponent("users.json")
        try JSONSerialization.data(withJSONObject: ["users": records]).write(to: export)
        let cache = directory.appendingPathComponent("cache")
        let warm = try Binary.run(["warm", export.path, "--cache", cache.path, "--log-level", "error"])
        #expect(warm.status == 0, "\(warm.stderr)")

        let lookup = try CacheLookup(cache: cache, recordsAccess: false)
        for user in users {
            let cached = try lookup.blocking.answer(forUser: user.id, viewSize: 55, scale: 3)
            let drawn = CacheLookup.monogram(forUser: user.id, displayName: user.name, colorHex: user.color)
            #expect(drawn.initials == cached.initials, "\(user.name)")
            #expect(drawn.color == cached.color, "\(user.name)")
            #expect(drawn.textColor == cached.textColor, "\(user.name)")
            #expect(drawn.placeholder == cached.placeholder, "\(user.name)")
            #expect(drawn.kind == .notCached && drawn.file == nil && drawn.userID == user.id)
        }
    }
}

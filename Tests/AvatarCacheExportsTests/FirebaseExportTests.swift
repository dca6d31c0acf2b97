import Foundation
import Testing
@testable import AvatarCacheExports
import AvatarCacheTestKit

/// Firestore and Firebase Auth exports as Firebase writes them (the real exports in
/// Fixtures/firebase, their README says whose), corrupted copies of them, exports written
/// by the benchmark's generator in the same format, and the field map (its pipeline-file
/// form: AvatarCacheConfigurationTests' FieldMapTests; warmed by the binary: the end-to-end
/// FirebaseWarmTests).
@Suite final class FirebaseExportTests {
    let scratch: URL

    init() throws { scratch = try Fixtures.temporaryDirectory("firebase") }

    deinit { try? FileManager.default.removeItem(at: scratch) }

    static func fixture(_ path: String) -> String { Fixtures.firebaseExport(path) }

    /// Profiles, bad records and notes a reader yields.
    func read(_ reader: ExportReader) throws -> Fixtures.ReadResult { try Fixtures.readAll(reader) }

    /// Every document of an export, decoded whole, by path.
    func documents(_ path: String) throws -> [String: DocumentFields] {
        let export = try FirestoreExport.locate(path)
        var documents: [String: DocumentFields] = [:]
        try export.forEach(maxRecordBytes: 28_000_000, reportDamage: true, { document in
            documents[document.pathText] = document.fields(wanted: nil).0
        }, damage: { Issue.record("damage: \($0)") })
        return documents
    }

    /// Runs scripts/benchmark/firestore_export.py into a new folder (or `out`).
    func generate(_ arguments: [String], into out: String? = nil) throws -> String {
        try Fixtures.generateFirestoreExport(arguments, in: scratch, into: out)
    }

    func copy(_ fixture: String) throws -> String { try Fixtures.copyFirebaseExport(fixture, into: scratch) }

    // MARK: Real exports

    @Test func anEmulatorExportFolderIsToldAndReadWithItsAuthAccounts() throws {
        let root = Self.fixture("hedwig")
        #expect(try ExportFormat.detect(path: root) == .firestore)
        #expect(try ExportFormat.detect(path: root + "/firestore_export") == .firestore, "the firestore_export folder alone")
        #expect(try ExportFormat.detect(path: root + "/auth_export/accounts.json") == .firebaseAuth)
        let read = try read(FirestoreReader(path: root))
        let names = Dictionary(uniqueKeysWithValues: read.profiles.map { ($0.id, $0.displayName) })
        #expect(names == ["P26HrXpTlZoqNbQbynw3Of8L10NL": "Simple user", "kepVgNT7oCuLPvcDqne90kROtOqi": "Upgradable organizer",
                          "odjJM592UTBW1eMgfNcp7rc8o1wS": "Main organizer"])
        #expect(read.profiles.allSatisfy { $0.photo == nil }, "photoUrl \"\" in Auth: a monogram")
        #expect(read.bad.isEmpty, "\(read.bad)")
        #expect(read.notes.contains { $0.contains("collection \"users\"") && $0.contains("name=displayName") && $0.contains("3 had name=displayName") }, "\(read.notes)")
        #expect(read.notes.contains { $0.contains("3 Firebase Auth accounts, 3 with a document, 0 read from Auth alone") }, "\(read.notes)")
    }

    @Test func everyValueTypeOfARealExportDecodes() throws {
        let documents = try documents(Self.fixture("ember-cloud-firestore-adapter"))
        #expect(documents.count == 19, "\(documents.keys.sorted())")
        #expect(documents["users/user_a"]?["age"] == .integer(15))
        #expect(documents["users/user_a"]?["name"] == .string("user_a"))
        #expect(documents["posts/post_c"]?["author"] == .reference("users/user_a"))
        #expect(documents["posts/post_c"]?["createdOn"] == .timestamp(microseconds: 1_604_768_837_556_000))
        #expect(documents["users/user_a/friends/user_c"]?["referenceTo"] == .reference("users/user_c"), "a subcollection keeps its parent path")
        #expect(documents["admins/user_a"]?["since"] == .integer(2010))
        // The people: `users` at the top and its `name`; `groups` and `friends` of users are not people.
        let read = try read(FirestoreReader(path: Self.fixture("ember-cloud-firestore-adapter")))
        #expect(read.profiles.map(\.id).sorted() == ["user_a", "user_b", "user_c"])
        #expect(read.profiles.allSatisfy { $0.displayName == $0.id })
    }

    @Test func recordsCutIntoFragmentsAcrossBlocksAndDeepMapsDecode() throws {
        let documents = try documents(Self.fixture("daily-cat"))
        #expect(documents.count == 11)
        let day = try #require(documents["days/2025-06-29"])
        guard case .map(let photo)? = day["photo"] else { Issue.record("photo is a map"); return }
        #expect(photo["description"] == .string("Cat hunting in a garden"))
        #expect(photo["sponsorship"] == .null)
        #expect(photo["public_domain"] == .bool(false))
        #expect(documents["photo-ids/gKXKBY-C-Dk"]?.isEmpty == true, "an empty document")
        // No collection of people: the error names what there is and a --map line.
        #expect {
            try self.read(FirestoreReader(path: Self.fixture("daily-cat")))
        } throws: { error in
            let text = "\(error)"
            return text.contains("no collection of people found") && text.contains("\"days\" (5 documents; fields of the first:")
                && text.contains("--map users=")
        }
        // With a map: the photographers of the days' photos.
        let map = try FieldMap(parsing: ["users=days", "id=photo.user.id", "name=photo.user.name", "photo=photo.user.profile_image.large"])
        let people = try read(FirestoreReader(path: Self.fixture("daily-cat"), map: map))
        #expect(people.profiles.count == 5, "\(people.profiles.map(\.id)) \(people.bad)")
        #expect(people.profiles.allSatisfy { $0.photoURL?.hasPrefix("https://images.unsplash.com/") == true && !$0.displayName.isEmpty })
    }

    @Test func subcollectionDocumentsWithoutTheirParentAndAnAuthAccountWithoutAName() throws {
        let documents = try documents(Self.fixture("faker-app"))
        #expect(documents.keys.allSatisfy { $0.hasPrefix("users/hilnrjuGV8v4nvO0F2Hd4qnP95Pp/jobs/") } && documents.count == 3)
        let read = try read(FirestoreReader(path: Self.fixture("faker-app")))
        #expect(read.profiles.map(\.id) == ["hilnrjuGV8v4nvO0F2Hd4qnP95Pp"], "the Auth account, read alone")
        #expect(read.profiles.first?.initials == "??")
        #expect(read.notes.contains { $0.contains("read alone") })
    }

    @Test func anAuthOnlyExportReadsNamesAndPhotos() throws {
        let read = try read(FirebaseAuthReader(path: Self.fixture("the-bulletin/auth_export/accounts.json")))
        #expect(read.profiles.count == 17)
        let demoman = try #require(read.profiles.first { $0.id == "TF2DEMOMANUID" })
        #expect(demoman.displayName == "Demoman")
        #expect(demoman.photoURL == "http://localhost:8000/images/emulation/avatars/Demomanava.jpg")
        #expect(read.profiles.filter { $0.photo != nil }.count == 9)
        #expect(read.profiles.first { $0.id == "8tnF8rdd49yTy2i3W1fQQhMOtN6v" }?.displayName == "Pinpoint Admin")
        // The emulator folder with only an Auth part reads the same people.
        let folder = try self.read(FirestoreReader(path: Self.fixture("the-bulletin")))
        #expect(folder.profiles.map(\.id) == read.profiles.map(\.id))
    }

    /// Every real Auth export (the emulator's `accounts.json`, a wrapper object of
    /// records, read by `JSONRecordStream` on `JSONReader`) read whole: its accounts,
    /// counted apart from our reader by their `"localId"` keys, are each a profile or a
    /// bad record, none lost.
    @Test func everyRealAuthExportReadsEveryAccount() throws {
        let exports = ["bsclibrary-2021", "bsclibrary-2022", "daily-cat", "faker-app", "hedwig", "journey-home", "the-bulletin"]
        var total = 0
        for export in exports {
            let path = Self.fixture(export + "/auth_export/accounts.json")
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let accounts = text.components(separatedBy: "\"localId\"").count - 1
            let read = try read(FirebaseAuthReader(path: path))
            #expect(read.profiles.count + read.bad.count == accounts, "\(export): \(read.profiles.count) profiles, \(read.bad.count) bad, \(accounts) accounts")
            #expect(Set(read.profiles.map(\.id)).count == read.profiles.count, "\(export)")
            total += accounts
        }
        #expect(total == 26, "the seven exports hold 26 accounts (grep -o localId)")
    }

    @Test func authCSVInItsDocumentedColumnsNeverKeepsTheHash() throws {
        let path = scratch.appendingPathComponent("users.csv").path
        let hash = "c2VjcmV0LWhhc2gtdmFsdWU="
        var lines = [
            "u1,ada@example.com,true,\(hash),c2FsdA==,\"Lovelace, Ada\",https://127.0.0.1/a.jpg,,,,,,,,,,,,,,,,,1486324345000,1486324345000,",
            "u2,bob@example.com,false,\(hash),c2FsdA==,,,g123,bob@gmail.com,Bob Google,https://127.0.0.1/b.jpg,,,,,,,,,,,,,1486324345000,,",
            "\"u3\",,false,,,\"Quote \"\"Q\"\" Person\",gs://bucket/q.png,,,,,,,,,,,,,,,,,,,",
            "",
            ",nobody@example.com,false,\(hash),,,,,,,,,,,,,,,,,,,,,,",
        ]
        lines.append("u5,short")
        try Data(lines.joined(separator: "\r\n").utf8).write(to: URL(fileURLWithPath: path))
        #expect(try ExportFormat.detect(path: path) == .firebaseAuth)
        let read = try read(FirebaseAuthReader(path: path))
        #expect(read.profiles.map(\.id) == ["u1", "u2", "u3"])
        #expect(read.profiles[0].displayName == "Lovelace, Ada" && read.profiles[0].photoURL == "https://127.0.0.1/a.jpg")
        #expect(read.profiles[1].displayName == "Bob Google" && read.profiles[1].photoURL == "https://127.0.0.1/b.jpg", "Google's name and photo fill the account's")
        #expect(read.profiles[2].displayName == "Quote \"Q\" Person" && read.profiles[2].photo == nil)
        #expect(read.bad.count == 3, "\(read.bad)")
        #expect(read.bad.contains { $0.reason.contains("Cloud Storage path") })
        #expect(read.bad.allSatisfy { !$0.description.contains(hash) && !$0.description.contains("c2FsdA") })
    }

    // MARK: Damage

    /// The daily-cat export's output file, to corrupt.
    func dailyCatOutput() throws -> (root: String, output: String) {
        let root = try copy("daily-cat")
        return (root, root + "/firestore_export/all_namespaces/all_kinds/output-0")
    }

    func edit(_ path: String, _ change: (inout [UInt8]) -> Void) throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        change(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func aFlippedByteCostsItsBlockAndTheRestIsRead() throws {
        let (root, output) = try dailyCatOutput()
        try edit(output) { $0[100] ^= 0x55 }
        var damage: [BadRecord] = []
        var count = 0
        try FirestoreExport.locate(root).forEach(maxRecordBytes: 28_000_000, reportDamage: true, { _ in count += 1 }, damage: { damage.append($0) })
        // Byte 100 is in the second record (the first is 74 bytes); the block's rest goes,
        // and the next block starts with the end of a record whose start was lost.
        #expect(damage.map(\.reason) == ["at byte 81: checksum mismatch; the rest of the block is skipped",
                                          "at byte 32768: a last fragment without the first one; skipped"], "\(damage.map(\.description))")
        #expect(damage.first?.file.hasSuffix("output-0") == true)
        #expect(count >= 8 && count < 11, "documents after the damaged block are still read: \(count)")
    }

    @Test func aTruncatedFileAndALengthPastItsBlockAreReportedWithTheirOffsets() throws {
        let (root, output) = try dailyCatOutput()
        try edit(output) { $0.removeLast(5000) }
        var damage: [String] = []
        var count = 0
        try FirestoreExport.locate(root).forEach(maxRecordBytes: 28_000_000, reportDamage: true, { _ in count += 1 }, damage: { damage.append("\($0)") })
        #expect(damage.count == 1 && damage[0].contains("at byte 146350: the file ends inside a record cut into fragments (truncated?)"), "\(damage)")
        #expect(count == 9, "the ninth and those before it")

        let (root2, output2) = try dailyCatOutput()
        try edit(output2) { $0[4] = 0xFF; $0[5] = 0xFF }
        var damage2: [String] = []
        var count2 = 0
        try FirestoreExport.locate(root2).forEach(maxRecordBytes: 28_000_000, reportDamage: true, { _ in count2 += 1 }, damage: { damage2.append("\($0)") })
        #expect(damage2.first?.contains("at byte 0: a record length (65535 bytes) runs past the end of its 32 KiB block") == true, "\(damage2)")
        #expect(count2 >= 8)
    }

    @Test func anUnknownValueTypeLeavesThatFieldOutAndAMissingOutputFileIsNamed() throws {
        // A users document with a value of a type no Firestore writes (PropertyValue field 9).
        func varint(_ n: Int) -> [UInt8] { var n = n; var out: [UInt8] = []; repeat { out.append(UInt8(n & 0x7F) | (n > 0x7F ? 0x80 : 0)); n >>= 7 } while n > 0; return out }
        func field(_ number: Int, _ payload: [UInt8]) -> [UInt8] { varint(number << 3 | 2) + varint(payload.count) + payload }
        let path = field(14, [0x0B] + field(2, Array("users".utf8)) + field(4, Array("u1".utf8)) + [0x0C])
        let key = field(13, field(13, Array("dev~x".utf8)) + path)
        let name = field(15, field(3, Array("displayName".utf8)) + field(5, field(3, Array("Ada Lovelace".utf8))))
        let odd = field(15, field(3, Array("photoURL".utf8)) + field(5, field(9, [1, 2, 3])))
        let entity = key + name + odd
        let decoded = try entity.withUnsafeBytes { try EntityProto.decode($0) }
        #expect(decoded.fields["displayName"] == .string("Ada Lovelace"))
        #expect(decoded.problems == ["field \"photoURL\": unknown value type (field 9, wire type 2): left out"])

        let root = scratch.appendingPathComponent("odd").path
        let kind = root + "/all_namespaces/all_kinds"
        try FileManager.default.createDirectory(atPath: kind, withIntermediateDirectories: true)
        var record: [UInt8] = []
        let crc = CRC32C.masked(([1] + entity).withUnsafeBytes { CRC32C.checksum($0) })
        record += withUnsafeBytes(of: crc.littleEndian, Array.init) + withUnsafeBytes(of: UInt16(entity.count).littleEndian, Array.init) + [1] + entity
        try Data(record).write(to: URL(fileURLWithPath: kind + "/output-0"))
        // The metadata names output-0 and output-1; output-1 is missing.
        let metadata = field(1, field(1, Array("odd".utf8))) + field(2, field(1, []) + field(2, Array("output-0".utf8))) + field(2, field(1, []) + field(2, Array("output-1".utf8)))
        try Data(metadata).write(to: URL(fileURLWithPath: kind + "/all_namespaces_all_kinds.export_metadata"))
        try Data().write(to: URL(fileURLWithPath: root + "/odd.overall_export_metadata"))
        let read = try read(FirestoreReader(path: root, map: try FieldMap(parsing: ["photo=photoURL"])))
        #expect(read.profiles.map(\.displayName) == ["Ada Lovelace"])
        #expect(read.bad.contains { $0.description.contains("all_namespaces_all_kinds.export_metadata: names the output file \"output-1\", which is missing") }, "\(read.bad)")
        #expect(read.bad.contains { $0.reason.contains("unknown value type") && $0.reason.contains("document users/u1 (at byte 0)") }, "\(read.bad.map(\.description))")
    }

    // MARK: Generated exports: conversations, fields, Auth

    @Test(arguments: ["array", "map", "subcollection", "roles"])
    func participantsOfTheMostRecentConversationsComeFirst(form: String) throws {
        let root = try generate(["--users", "30", "--conversations", "6", "--participants", form, "--photo-field", "pfpUrl", "--docs-per-file", "11"])
        var map = FieldMap()
        if form == "roles" { try map.add("participants=buyerId+sellerId") }
        let read = try read(FirestoreReader(path: root, map: map))
        #expect(Set(read.profiles.map(\.id)).count == 30, "everyone once: \(read.profiles.map(\.id))")
        #expect(read.profiles.allSatisfy { $0.photoURL?.contains("?u=\($0.id.dropFirst())") == true && !$0.displayName.isEmpty })
        // The generator's conversation j is more recent than j-1; its two users come first.
        let documents = try documents(root)
        var expected: [String] = []
        for j in (0..<6).reversed() {
            let fields = try #require(documents["conversations/c\(j)"])
            var ids: [String] = []
            switch form {
            case "array": if case .array(let values)? = fields["participantIds"] { ids = values.compactMap(PeoplePlan.text) }
            case "map": if case .map(let members)? = fields["participants"] { ids = members.names }
            case "roles": ids = [fields["buyerId"], fields["sellerId"]].compactMap { $0.flatMap(PeoplePlan.text) }
            default: ids = documents.keys.filter { $0.hasPrefix("conversations/c\(j)/participants/") }.map { String($0.split(separator: "/").last!) }.sorted()
            }
            for id in ids where !expected.contains(id) { expected.append(id) }
        }
        #expect(Set(read.profiles.prefix(expected.count).map(\.id)) == Set(expected), "\(read.profiles.prefix(expected.count).map(\.id)) vs \(expected)")
        if form != "subcollection" {
            #expect(Array(read.profiles.prefix(2).map(\.id)).sorted() == Array(expected.prefix(2)).sorted())
        }
        #expect(read.notes.contains { $0.contains("photo=pfpUrl") && $0.contains("30 had photo=pfpUrl") && $0.contains("6 conversations") }, "\(read.notes)")
    }

    @Test func authFillsWhatTheDocumentLacksAndAuthOnlyUsersAreRead() throws {
        let root = try generate(["--users", "20", "--auth", "20", "--photo-base", ""])
        let read = try read(FirestoreReader(path: root))
        #expect(read.profiles.count == 22, "20 documents and 2 Auth-only accounts")
        let u3 = try #require(read.profiles.first { $0.id == "u3" })
        #expect(!u3.displayName.hasPrefix("Auth User"), "the document's name wins")
        #expect(u3.photoURL?.hasSuffix("?auth=3") == true, "the Google sign-in photo fills the missing one")
        #expect(read.profiles.suffix(2).map(\.displayName) == ["Auth User 20", "Auth User 21"])
        #expect(read.bad.isEmpty, "\(read.bad)")
    }

    @Test func theScanChoosesAUidFieldAsTheIdWhenTheDocumentIDIsRandom() throws {
        var fields = [DocumentFields]()
        var ids = [String]()
        for n in 0..<10 {
            fields.append(DocumentFields([("uid", .string("auth\(n)")), ("displayName", .string("P \(n)")), ("profile_img", .string("/empty-profile.png"))]))
            ids.append("random\(n)")
        }
        let plan = FieldChooser.plan(FieldMap(), samples: fields, documentIDs: ids, idFromRecord: false)
        #expect(plan.id?.map(\.text) == ["uid"])
        #expect(plan.photo.map(\.text) == ["profile_img"])
        var tally = PeoplePlan.Tally()
        var problems: [String] = []
        let profile = plan.profile(documentID: "random0", fields: fields[0], limits: ReaderLimits(), tally: &tally, problems: &problems)
        #expect(profile?.id == "auth0" && profile?.photo == nil)
        #expect(problems == ["field \"profile_img\": \"/empty-profile.png\" is a relative path, not a URL (its host is not in the export; a Firebase Storage path is downloaded with --storage-bucket): monogram used"])
    }

    // MARK: Photo values and the field map

    @Test func photoValuesAsAppsStoreThem() throws {
        let limits = ReaderLimits()
        func source(_ value: DocumentValue) -> String {
            switch PhotoValue.source(value, limits: limits) {
            case .success(.url(let url, _)?): return "url \(url)"
            case .success(.inline(let photo)?): return "inline \(photo.bytes.count)"
            case .success(nil): return "none"
            case .failure(let problem): return "refused \(problem.description)"
            }
        }
        #expect(source(.string(" https://firebasestorage.googleapis.com/v0/b/x/o/a.jpg?alt=media ")) == "url https://firebasestorage.googleapis.com/v0/b/x/o/a.jpg?alt=media")
        #expect(source(.string("HTTP://lh3.googleusercontent.com/a/x=s96-c")) == "url HTTP://lh3.googleusercontent.com/a/x=s96-c")
        #expect(source(.string("data:image/png;base64,iVBORw0KGgo=")) == "inline 8")
        #expect(source(.string("gs://app.appspot.com/avatars/u1.jpg")).hasPrefix("refused \"gs://app.appspot.com/avatars/u1.jpg\" is a Cloud Storage path"))
        #expect(source(.string("blob:http://localhost:3000/9b1d")).contains("blob: URL"))
        #expect(source(.string("images/u1/1703173156598")).contains("relative path"))
        #expect(source(.string("file:///etc/passwd")).contains("file: scheme is not fetched"))
        #expect(source(.string("")) == "none")
        #expect(source(.null) == "none")
        #expect(source(.array([.string("https://a.example/1.jpg"), .string("https://a.example/2.jpg")])) == "url https://a.example/1.jpg")
        #expect(source(.map(DocumentFields([("downloadUrl", .string("https://a.example/d.jpg")), ("path", .string("x"))]))) == "url https://a.example/d.jpg")
        #expect(source(.integer(3)).hasPrefix("refused expected a URL, found a number"))
    }

    @Test func jsonExportsWithOtherNamesAreReadThroughTheMap() throws {
        // photoURL instead of profileImageUrl, no map: chosen, and said.
        let plain = scratch.appendingPathComponent("plain.json").path
        try Data(#"{"users": [{"id": "1", "name": "Ada Lovelace", "photoURL": "https://x.example/1.jpg"}, {"id": "2", "name": "Bob", "photoURL": null}]}"#.utf8)
            .write(to: URL(fileURLWithPath: plain))
        let chosen = try read(NexusUsersReader(path: plain))
        #expect(chosen.profiles.map(\.id) == ["1", "2"])
        #expect(chosen.profiles[0].photoURL == "https://x.example/1.jpg" && chosen.profiles[0].initials == "AL")
        #expect(chosen.notes.first?.contains("photo=photoURL") == true, "\(chosen.notes)")
        // A Realtime Database export: users keyed by id, the photo nested, the name in two fields.
        let keyed = scratch.appendingPathComponent("rtdb.json").path
        try Data(#"{"chats": {}, "users": {"uA": {"first_name": "Grace", "last_name": "Hopper", "profile_photo": {"downloadUrl": "https://x.example/g.jpg"}}, "uB": {"first_name": "Alan"}}}"#.utf8)
            .write(to: URL(fileURLWithPath: keyed))
        let map = try FieldMap(parsing: ["photo=profile_photo.downloadUrl"])
        let byKey = try read(ExportFormat.nexusUsers.reader(path: keyed, limits: ReaderLimits(), map: map))
        #expect(byKey.profiles.map(\.id) == ["uA", "uB"])
        #expect(byKey.profiles[0].displayName == "Grace Hopper" && byKey.profiles[0].photoURL == "https://x.example/g.jpg")
        #expect(byKey.profiles[1].displayName == "Alan")
        // NexusAI's own names still take the fast reader, unchanged.
        let nexus = try Fixtures.writeUsersExport([(id: "n1", name: "Nex Us", url: "https://x.example/n.jpg")], in: scratch)
        let fast = try read(NexusUsersReader(path: nexus))
        #expect(fast.profiles.map(\.photoURL) == ["https://x.example/n.jpg"] && fast.notes.isEmpty)
    }
}

import Foundation
import Testing
@testable import AvatarCacheExports
import AvatarCacheTestKit

/// Every Firestore export an operator has, whatever layout Firebase wrote it in, every
/// document accounted for: the real exports of Fixtures/firebase (emulator and production
/// `gcloud firestore export`, one of 66 output files) read to the count their metadata
/// states; the benchmark's generator checked against their bytes; and the layouts no
/// licensed real export shows (several emulator output files, `--collection-ids`, an
/// emulator root around a production export) written by that generator.
@Suite final class FirebaseExportLayoutTests {
    let scratch: URL

    init() throws { scratch = try Fixtures.temporaryDirectory("firebase-layouts") }

    deinit { try? FileManager.default.removeItem(at: scratch) }

    static func fixture(_ path: String) -> String { Fixtures.firebaseExport(path) }

    func read(_ reader: ExportReader) throws -> Fixtures.ReadResult { try Fixtures.readAll(reader) }

    /// Runs scripts/benchmark/firestore_export.py into a new folder (or `out`).
    func generate(_ arguments: [String], into out: String? = nil) throws -> String {
        try Fixtures.generateFirestoreExport(arguments, in: scratch, into: out)
    }

    func copy(_ fixture: String) throws -> String { try Fixtures.copyFirebaseExport(fixture, into: scratch) }

    /// Every document of an export, counted the way the reader reads them, with the damage.
    func count(_ path: String) throws -> (export: FirestoreExport, read: Int, damage: [BadRecord]) {
        let export = try FirestoreExport.locate(path)
        var damage: [BadRecord] = []
        let read = try export.forEach(maxRecordBytes: ReaderLimits.defaultMaxRecordBytes, reportDamage: true, { _ in }, damage: { damage.append($0) })
        return (export, read, damage)
    }

    // MARK: Real exports, every document

    /// The counts are those the fixtures' overall metadata states, as read by a decoder
    /// written apart from this project's (Fixtures/firebase/README.md): each export is read
    /// to exactly that many documents, with no damage.
    @Test(arguments: [("hedwig", 3, 1), ("ember-cloud-firestore-adapter", 19, 1), ("daily-cat", 11, 1), ("faker-app", 3, 1),
                      ("journey-home", 19, 1), ("savage", 18, 1), ("movielens-gcloud", 9762, 66),
                      ("bsclibrary-2021", 4, 1), ("bsclibrary-2022", 6, 1)])
    func everyRealExportReadsEveryDocumentItsMetadataStates(fixture: String, documents: Int, outputFiles: Int) throws {
        let (export, read, damage) = try count(Self.fixture(fixture))
        #expect(export.stated == documents)
        #expect(read == documents)
        #expect(export.outputFiles.count == outputFiles)
        #expect(export.missing.isEmpty && export.missingKinds.isEmpty)
        #expect(damage.isEmpty, "\(damage)")
    }

    /// A production `gcloud firestore export` (MovieLens, 66 output files zero-padded to
    /// whole blocks, its kind `__all__`, the overall metadata named by its prefix): read
    /// through the field map, every file, the count said.
    @Test func aProductionGcloudExportIsReadWholeThroughTheMap() throws {
        let root = Self.fixture("movielens-gcloud")
        #expect(try ExportFormat.detect(path: root) == .firestore)
        let read = try read(FirestoreReader(path: root, map: try FieldMap(parsing: ["users=movies", "name=title", "photo=poster"])))
        #expect(read.profiles.count == 9742)
        #expect(read.bad.isEmpty, "\(read.bad.prefix(3))")
        #expect(read.counts == [InputCount(source: root, statedBy: root + "/firestore.overall_export_metadata", unit: "documents", stated: 9762, read: 9762)])
        #expect(read.profiles.first { $0.id == "152105" }?.displayName == "Dad's Army")
        #expect(read.profiles.filter { $0.photoURL?.hasPrefix("http://image.tmdb.org/") == true }.count > 9000)
        // Its metadata file alone, or its kind's, reads the same files.
        #expect(try count(root + "/firestore.overall_export_metadata").read == 9762)
        #expect(try count(root + "/all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata").read == 9762)
    }

    /// Journey Home's emulator export: people by first and last name, the count said.
    @Test func anEmulatorExportsPeopleByFirstAndLastNameAndItsCount() throws {
        let root = Self.fixture("journey-home")
        let read = try read(FirestoreReader(path: root))
        #expect(Set(read.profiles.map(\.displayName)) == ["Admin Test", "CaseManager Test", "Volunteer Test"], "\(read.profiles.map(\.displayName))")
        #expect(read.counts.map(\.stated) == [19] && read.counts.map(\.read) == [19])
        #expect(read.bad.isEmpty, "\(read.bad)")
    }

    // MARK: The generator against Firebase's bytes

    /// The start and end times a kind's metadata states (field 1: { 2, 3 }).
    func times(_ metadata: String) throws -> String {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: metadata)))
        let info = try #require(MetadataMessages.fields(bytes)?.first { $0.field == 1 }?.bytes)
        let fields = try #require(MetadataMessages.fields(info))
        let start = try #require(fields.first { $0.field == 2 }?.number)
        let end = try #require(fields.first { $0.field == 3 }?.number)
        return "\(start),\(end)"
    }

    /// The generator writes a kind's metadata byte for byte as Firebase does, given the
    /// same times and files: the emulator's (hedwig's, one output) and production's
    /// (MovieLens's, 66 outputs named in one message, `__all__`, field 3); and the overall
    /// metadata's framing, its "3" record and its message up to the counts.
    @Test(arguments: [("hedwig", "firestore_export/all_namespaces/all_kinds", "firestore_export/firestore_export.overall_export_metadata", "emulator", 1),
                      ("movielens-gcloud", "all_namespaces/all_kinds", "firestore.overall_export_metadata", "production", 66)])
    func theGeneratorWritesFirebasesOwnMetadataBytes(fixture: String, kindFolder: String, overall: String, layout: String, outputs: Int) throws {
        let realKind = Self.fixture("\(fixture)/\(kindFolder)/all_namespaces_all_kinds.export_metadata")
        let out = try generate(["--users", "\(outputs)", "--docs-per-file", "1", "--photo-base", "", "--layout", layout, "--times", try times(realKind)])
        let generatedRoot = layout == "emulator" ? out + "/firestore_export" : out
        let generatedKind = generatedRoot + "/all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata"
        #expect(try Data(contentsOf: URL(fileURLWithPath: generatedKind)) == Data(contentsOf: URL(fileURLWithPath: realKind)))

        let realOverall = Array(try Data(contentsOf: URL(fileURLWithPath: Self.fixture("\(fixture)/\(overall)"))))
        let overallName = try #require(FileManager.default.contentsOfDirectory(atPath: generatedRoot).first { $0.hasSuffix(".overall_export_metadata") })
        let generatedOverall = Array(try Data(contentsOf: URL(fileURLWithPath: generatedRoot + "/" + overallName)))
        #expect(generatedOverall.prefix(8) == realOverall.prefix(8), "the record \"3\", its header included")
        let real = try #require(MetadataMessages.logRecords(realOverall))
        let generated = try #require(MetadataMessages.logRecords(generatedOverall))
        #expect(real.count == 2 && generated.count == 2)
        // { 1: { 1: { 1: 2, 3: 3 }, 2: path, 3: documents, 4: bytes } }: equal up to the counts.
        let path = Array("all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata".utf8)
        let upToCounts = 2 + 6 + 2 + path.count
        #expect(Array(real[1][2..<upToCounts]) == Array(generated[1][2..<upToCounts]))
        for record in [real[1], generated[1]] {
            #expect(record[0] == 0x0A && record[upToCounts] == 0x18, "field 1, then the documents")
            let entry = try #require(MetadataMessages.fields(Array(record[2...])))
            #expect(entry.map(\.field) == [1, 2, 3, 4])
        }
        if layout == "production" {
            // Production's output files end zero-padded to a whole block, as MovieLens's do.
            for n in 0..<outputs {
                let size = try #require(try FileManager.default.attributesOfItem(atPath: out + "/all_namespaces/all_kinds/output-\(n)")[.size] as? Int)
                #expect(size % 32768 == 0)
            }
        }
        #expect(try count(out).read == outputs)
    }

    // MARK: Layouts no licensed real export shows, written by the generator

    /// 1,550 people over 11 output files, as the emulator splits a large export: every
    /// one read (the reader once read only the last file: 60 of 1,550), the count said.
    @Test func aLargeEmulatorExportIsReadFromEveryOutputFile() throws {
        let out = try generate(["--users", "1550", "--docs-per-file", "150", "--photo-base", "http://127.0.0.1:9/p"])
        let files = try FileManager.default.contentsOfDirectory(atPath: out + "/firestore_export/all_namespaces/all_kinds").filter { $0.hasPrefix("output-") }
        #expect(files.count == 11)
        let read = try read(FirestoreReader(path: out))
        #expect(read.profiles.count == 1550)
        #expect(Set(read.profiles.map(\.id)).count == 1550)
        #expect(read.counts.map(\.read) == [1550] && read.counts.map(\.stated) == [1550])
        #expect(read.bad.isEmpty, "\(read.bad.prefix(3))")
    }

    /// `gcloud firestore export --collection-ids`: a kind folder per collection, each kind
    /// named by its id; people and the conversations that rank them both read.
    @Test func aCollectionIDsExportReadsEveryKindFolder() throws {
        let out = try generate(["--users", "500", "--conversations", "120", "--docs-per-file", "100", "--layout", "production",
                                "--collection-ids", "--photo-base", "http://127.0.0.1:9/p"])
        #expect(FileManager.default.fileExists(atPath: out + "/all_namespaces/kind_users/all_namespaces_kind_users.export_metadata"))
        #expect(FileManager.default.fileExists(atPath: out + "/all_namespaces/kind_conversations/output-1"))
        let read = try read(FirestoreReader(path: out))
        #expect(read.profiles.count == 500)
        #expect(read.counts.map(\.stated) == [620] && read.counts.map(\.read) == [620])
        #expect(read.notes.contains { $0.contains("120 conversations") }, "\(read.notes)")
        #expect(read.bad.isEmpty, "\(read.bad.prefix(3))")
    }

    /// A production export written into an emulator's root by a script (beside the
    /// emulator's own, with an empty output file of its own): the root reads what
    /// `firebase emulators:start --import` loads, the emulator's documents and its count,
    /// and says the other is there; given as its own input, the other is read.
    @Test func aProductionExportInsideAnEmulatorRootIsReadOnlyAsItsOwnInput() throws {
        let root = try copy("journey-home")
        let kind = root + "/firestore_export/all_namespaces/all_kinds"
        // An empty output file the metadata does not name.
        FileManager.default.createFile(atPath: kind + "/output-1", contents: Data())
        let production = root + "/prod-backup/2026-11-27T08:00:00_54321"
        _ = try generate(["--users", "40", "--docs-per-file", "25", "--layout", "production", "--collection-ids", "--photo-base", ""],
                         into: production)
        let read = try read(FirestoreReader(path: root))
        #expect(read.profiles.count == 3, "\(read.profiles.count)")
        #expect(read.counts.map(\.stated) == [19] && read.counts.map(\.read) == [19])
        #expect(read.notes.contains { $0.contains("does not name 1 output file") && $0.contains("output-1") }, "\(read.notes)")
        #expect(read.notes.contains { $0.hasPrefix(production + ": a Firestore export inside the emulator's export") && $0.contains("not read") }, "\(read.notes)")
        #expect(read.bad.isEmpty, "\(read.bad)")
        let alone = try self.read(FirestoreReader(path: production))
        #expect(alone.profiles.count == 40 && alone.counts.map(\.stated) == [40] && alone.counts.map(\.read) == [40], "\(alone.counts)")
    }

    // MARK: Fewer than stated is never silent

    /// A missing output file and a flipped byte: each a bad record naming the file and
    /// what was lost, the count short, and a bad record saying by how much.
    @Test func aMissingFileAndADamagedBlockAreCountedAsLost() throws {
        let out = try generate(["--users", "600", "--docs-per-file", "100", "--photo-base", ""])
        let kind = out + "/firestore_export/all_namespaces/all_kinds"
        try FileManager.default.removeItem(atPath: kind + "/output-2")
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: kind + "/output-4")))
        bytes[100] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: kind + "/output-4"))
        let read = try read(FirestoreReader(path: out))
        let count = try #require(read.counts.first)
        #expect(count.stated == 600)
        #expect(count.read < 500 && count.read >= 400, "\(count)")
        #expect(read.profiles.count == count.read)
        #expect(read.bad.contains { $0.reason.contains("names the output file \"output-2\", which is missing") }, "\(read.bad)")
        #expect(read.bad.contains { $0.file.hasSuffix("output-4") && $0.reason.contains("checksum mismatch") }, "\(read.bad)")
        #expect(read.bad.contains { $0.file.hasSuffix(".overall_export_metadata") && $0.reason.contains("states 600 documents; \(count.read) were read") }, "\(read.bad)")
    }

    /// The run fails with its own exit status (5) when documents are lost, says so in its
    /// summary and report, and keeps what it cached; `--max-failure-rate` allows a loss.
    @Test func aRunThatLosesDocumentsExitsFiveUnlessTheRateAllowsIt() throws {
        let out = try generate(["--users", "300", "--docs-per-file", "100", "--photo-base", ""])
        try FileManager.default.removeItem(atPath: out + "/firestore_export/all_namespaces/all_kinds/output-1")
        let cache = scratch.appendingPathComponent("cache").path
        let report = scratch.appendingPathComponent("report.json").path
        let lost = try Binary.run(["warm", out, "--cache", cache, "--report", report])
        #expect(lost.status == 5, "\(lost.stderr)")
        #expect(lost.stdout.contains("documents read 200 of 300 stated (100 LOST)"), "\(lost.stdout)")
        #expect(lost.stderr.contains("output-1") && lost.stderr.contains("fewer records read than the inputs state"), "\(lost.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        #expect(json?["recordsLost"] as? Int == 100)
        let counts = json?["inputCounts"] as? [[String: Any]]
        #expect(counts?.first?["stated"] as? Int == 300 && counts?.first?["read"] as? Int == 200)
        #expect(json?["profiles"] as? Int == 200, "what was read is cached")

        let allowed = try Binary.run(["warm", out, "--cache", cache, "--max-failure-rate", "0.4"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(allowed.stdout.contains("documents read 200 of 300 stated (100 LOST)"))
        let whole = try generate(["--users", "300", "--docs-per-file", "100", "--photo-base", ""])
        let fine = try Binary.run(["warm", whole, "--cache", cache])
        #expect(fine.status == 0, "\(fine.stderr)")
        #expect(fine.stdout.contains("documents read 300 of 300 stated") && !fine.stdout.contains("LOST"), "\(fine.stdout)")
    }

    // MARK: What a person would choose, without a map

    /// Field names matched case-blind and across snake_case and camelCase (`photo_url`,
    /// `Name`), in a collection named as no list knows it.
    /// (Names no list holds, seen in real exports: `profilePhotoLink`, `iconPath`,
    /// `player_handle` in `v2_players`, people with a name and nothing else in `participants`.)
    @Test(arguments: [("photo_url", "Name", "players", false), ("Picture", "full_name", "members", false), ("PhotoURL", "display_name", "crew", false),
                      ("profilePhotoLink", "player_handle", "v2_players", true), ("iconPath", "name", "participants", true)])
    func fieldNamesAreMatchedAsAPersonReadsThem(photoField: String, nameField: String, collection: String, noEmail: Bool) throws {
        let out = try generate(["--users", "50", "--photo-field", photoField, "--name-field", nameField, "--collection", collection,
                                "--photo-base", "http://127.0.0.1:9/p"] + (noEmail ? ["--no-email"] : []))
        let read = try read(FirestoreReader(path: out))
        #expect(read.profiles.count == 50)
        #expect(read.profiles.allSatisfy { $0.photoURL?.hasPrefix("http://127.0.0.1:9/p/") == true }, "\(read.notes)")
        #expect(read.profiles.allSatisfy { $0.displayName.split(separator: " ").count == 2 }, "\(read.notes)")
        #expect(read.notes.contains { $0.contains("collection \"\(collection)\"") && $0.contains("photo=\(photoField)") && $0.contains("name=\(nameField)") }, "\(read.notes)")
    }

    /// People kept in `publicUserInfo` while `users` holds only uid and e-mail: the
    /// collection whose documents have names and photos is chosen, and the note says why.
    @Test func thePeoplesCollectionIsChosenByWhatItsDocumentsHold() throws {
        let out = try generate(["--users", "40", "--collection", "publicUserInfo", "--shadow-users", "--photo-base", "http://127.0.0.1:9/p"])
        let read = try read(FirestoreReader(path: out))
        #expect(read.profiles.count == 40)
        #expect(read.profiles.allSatisfy { $0.photoURL != nil && !$0.displayName.isEmpty })
        let note = try #require(read.notes.first { $0.contains("people from collection") })
        #expect(note.contains("collection \"publicUserInfo\"") && note.contains("chosen by its documents: of 40 sampled documents, 40 have a name, 40 a photo"), "\(note)")
        #expect(note.contains("others seen: \"users\""), "\(note)")
    }

    /// `fullName` in two of three documents and a `username` handle in all: the full names
    /// are read, the handle only where there is no full name.
    @Test func theFullestNamesWinOverAHandleInMoreDocuments() throws {
        let out = try generate(["--users", "30", "--name-field", "fullName", "--handles", "--photo-base", ""])
        let read = try read(FirestoreReader(path: out))
        let names = Dictionary(uniqueKeysWithValues: read.profiles.map { ($0.id, $0.displayName) })
        #expect(names["u0"]?.split(separator: " ").count == 2, "\(names)")
        #expect(names["u2"]?.hasSuffix("_2") == true, "u2 has no fullName: its handle: \(names)")
        #expect(read.notes.contains { $0.contains("name=fullName|username") }, "\(read.notes)")
    }

    /// A collection of things with a name and an image (products) is not taken for people.
    @Test func productsWithANameAndAnImageAreNotPeople() throws {
        let out = try generate(["--users", "0", "--from-json", try productsJSON(), "--collection", "products", "--photo-base", ""])
        #expect(throws: ExportError.self) { try self.read(FirestoreReader(path: out)) }
    }

    func productsJSON() throws -> String {
        let path = scratch.appendingPathComponent("products.json").path
        let users = (0..<20).map { ["id": "p\($0)", "displayName": "Desk lamp \($0)", "profileImageUrl": "http://127.0.0.1:9/p/\($0).jpg", "price": "12"] }
        try JSONSerialization.data(withJSONObject: ["users": users]).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: The whole emulator export as one input

    /// Firestore, the Realtime Database and Auth read as one input: each person once (the
    /// Firestore document first, then the database's member, then Auth alone), the
    /// database's node of people chosen by its members (not its reverse index of names).
    @Test func firestoreTheRealtimeDatabaseAndAuthAreOneInput() throws {
        let out = try generate(["--users", "20", "--database", "15", "--auth", "25", "--photo-base", "http://127.0.0.1:9/p"])
        let read = try read(FirestoreReader(path: out))
        let ids = read.profiles.map(\.id)
        #expect(ids.count == Set(ids).count, "each person once: \(ids)")
        #expect(Set(ids) == Set((0..<30).map { "u\($0)" } + ["u20", "u21"]), "\(ids.sorted())")
        let byID = Dictionary(uniqueKeysWithValues: read.profiles.map { ($0.id, $0) })
        #expect(byID["u3"]?.photoURL?.contains("?u=3") == true, "Firestore's document wins over the database's")
        #expect(byID["u25"]?.photoURL?.contains("?rtdb=25") == true, "a database member with no document")
        #expect(read.notes.contains { $0.contains("people from node \"userDetails\"") && $0.contains("chosen by its members") }, "\(read.notes)")
        #expect(read.notes.contains { $0.contains("5 people here were read from an earlier part") }, "\(read.notes)")
        #expect(read.counts.map(\.read) == [20])
        #expect(read.bad.isEmpty, "\(read.bad)")
        for text in read.notes + read.bad.map(\.description) { #expect(!text.contains("fakeHash") && !text.contains("password=")) }
    }

    /// No Firestore part: the Realtime Database and Auth are still read, by the binary too.
    @Test func anExportWithoutFirestoreReadsItsOtherParts() throws {
        let out = try generate(["--users", "10", "--database", "12", "--auth", "10", "--no-firestore", "--photo-base", ""])
        #expect(!FileManager.default.fileExists(atPath: out + "/firestore_export"))
        let read = try read(FirestoreReader(path: out))
        // u0–u4 and u10–u16 in the database; u0–u9 in Auth.
        #expect(Set(read.profiles.map(\.id)) == Set((0..<17).map { "u\($0)" }), "\(read.profiles.map(\.id))")
        #expect(read.profiles.count == 17)
        let cache = scratch.appendingPathComponent("cache-no-firestore").path
        let run = try Binary.run(["warm", out, "--cache", cache])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("17 profiles"), "\(run.stdout)")
    }

    /// An emulator export whose Firestore is empty (its kind names no file) and whose
    /// people are Auth accounts only: read, not refused.
    @Test func anEmptyFirestoreWithAuthAccountsIsRead() throws {
        let out = try generate(["--users", "0", "--auth", "0", "--photo-base", ""])
        // The Bulletin's accounts, as an emulator export with an empty Firestore holds them.
        try FileManager.default.createDirectory(atPath: out + "/auth_export", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixture("the-bulletin/auth_export/accounts.json"), toPath: out + "/auth_export/accounts.json")
        var meta = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/firebase-export-metadata.json"))) as! [String: Any]
        meta["auth"] = ["version": "13.0.0", "path": "auth_export"]
        try JSONSerialization.data(withJSONObject: meta).write(to: URL(fileURLWithPath: out + "/firebase-export-metadata.json"))
        let read = try read(FirestoreReader(path: out))
        #expect(read.profiles.count == 17)
        #expect(read.counts.map(\.stated) == [0] && read.counts.map(\.read) == [0])
    }

    // MARK: Photos in Firebase Storage

    /// Two photo files for the generator's Storage objects.
    func storagePhotos() throws -> (folder: String, bytes: [[UInt8]]) {
        let folder = scratch.appendingPathComponent("storage-photos-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var bytes: [[UInt8]] = []
        for name in ["astronaut-progressive.jpg", "camera-grey-progressive.jpg"] {
            let source = Fixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/photos/\(name)").path
            try FileManager.default.copyItem(atPath: source, toPath: folder + "/" + name)
            bytes.append([UInt8](try Data(contentsOf: URL(fileURLWithPath: source))))
        }
        return (folder, bytes)
    }

    /// An emulator export's Storage objects are read from its blobs, whatever the
    /// emulator's layout and however a document names them (gs://, a storage path, the
    /// emulator's download URL, Storage's { bucket, fullPath }): no network.
    @Test(arguments: [("gs", "uuid"), ("path", "nested"), ("url", "flat"), ("map", "uuid")])
    func storagePhotosOfAnEmulatorExportAreReadFromItsBlobs(refs: String, layout: String) throws {
        let photos = try storagePhotos()
        let out = try generate(["--users", "10", "--storage", "6", "--storage-photos", photos.folder, "--storage-refs", refs,
                                "--storage-layout", layout, "--photo-base", "http://127.0.0.1:9/p"])
        let read = try read(FirestoreReader(path: out))
        let byID = Dictionary(uniqueKeysWithValues: read.profiles.map { ($0.id, $0) })
        for i in 0..<6 {
            guard case .inline(let photo) = byID["u\(i)"]?.photo else {
                Issue.record("u\(i): \(String(describing: byID["u\(i)"]?.photo))")
                continue
            }
            #expect(photo.bytes == photos.bytes[i % 2])
        }
        #expect((6..<10).allSatisfy { byID["u\($0)"]?.photoURL?.hasPrefix("http://127.0.0.1:9/p/") == true })
        #expect(read.notes.contains { $0.contains("6 Storage objects read from the export") && $0.contains("bucket \"demo-project.appspot.com\"") }, "\(read.notes)")
        #expect(read.bad.isEmpty, "\(read.bad)")
    }

    /// The binary caches an emulator export's Storage photos from the export: nothing
    /// downloaded (the documents name the emulator's download URLs on 127.0.0.1:9199,
    /// which nothing serves and private addresses are refused anyway).
    @Test func warmCachesStoragePhotosWithoutTheNetwork() throws {
        let photos = try storagePhotos()
        let out = try generate(["--users", "6", "--storage", "6", "--storage-photos", photos.folder, "--storage-refs", "url", "--photo-base", ""])
        let cache = scratch.appendingPathComponent("cache-storage").path
        let run = try Binary.run(["warm", out, "--cache", cache])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(" 0 downloaded") && run.stdout.contains(", 0 failed"), "\(run.stdout)")
        #expect(run.stdout.contains("6 profiles show a photo"), "\(run.stdout)")
    }

    /// Without the export's objects: a storage path or gs:// URL is downloaded from a bucket
    /// when one is named (through Storage's public download URL, the name encoded as one
    /// segment); without a bucket, reported as before and drawn as a monogram.
    @Test func storagePathsBecomeDownloadURLsWhenABucketIsNamed() throws {
        for refs in ["path", "gs"] {
            let photos = try storagePhotos()
            let out = try generate(["--users", "3", "--storage", "3", "--storage-photos", photos.folder, "--storage-refs", refs, "--photo-base", ""])
            try FileManager.default.removeItem(atPath: out + "/storage_export")
            let unnamed = try read(FirestoreReader(path: out))
            #expect(unnamed.profiles.allSatisfy { $0.photo == nil })
            #expect(unnamed.bad.count == 3 && unnamed.bad.allSatisfy { $0.reason.contains("--storage-bucket") }, "\(unnamed.bad)")
            var limits = ReaderLimits()
            limits.storageBucket = "gs://my-app.appspot.com/"
            let named = try read(FirestoreReader(path: out, limits: limits))
            let bucket = refs == "gs" ? "demo-project.appspot.com" : "my-app.appspot.com"
            #expect(named.profiles.map(\.photoURL) == (0..<3).map { "https://firebasestorage.googleapis.com/v0/b/\(bucket)/o/users%2Fu\($0)%2Favatar.jpg?alt=media" },
                    "\(refs): \(named.profiles.map(\.photoURL))")
            #expect(named.bad.isEmpty, "\(named.bad)")
        }
        #expect(FirebaseStorage.downloadURL(bucket: "b", name: "users/Tim Mendoza/images (3)+ü.jpg")
                == "https://firebasestorage.googleapis.com/v0/b/b/o/users%2FTim%20Mendoza%2Fimages%20(3)%2B%C3%BC.jpg?alt=media")
    }

    /// A Storage object whose blob is missing: a bad record naming its metadata file; the
    /// person's photo is then what the network rules make of the reference.
    @Test func aMissingBlobIsABadRecord() throws {
        let photos = try storagePhotos()
        let out = try generate(["--users", "2", "--storage", "2", "--storage-photos", photos.folder, "--storage-refs", "path", "--storage-layout", "nested", "--photo-base", ""])
        try FileManager.default.removeItem(atPath: out + "/storage_export/blobs/demo-project.appspot.com/users/u1/avatar.jpg")
        let read = try read(FirestoreReader(path: out))
        #expect(read.bad.contains { $0.file.hasSuffix("users/u1/avatar.jpg.json") && $0.reason.contains("whose blob is missing") }, "\(read.bad)")
        let byID = Dictionary(uniqueKeysWithValues: read.profiles.map { ($0.id, $0) })
        if case .inline = byID["u0"]?.photo {} else { Issue.record("u0's blob is there: \(String(describing: byID["u0"]?.photo))") }
        #expect(byID["u1"]?.photoURL == "https://firebasestorage.googleapis.com/v0/b/demo-project.appspot.com/o/users%2Fu1%2Favatar.jpg?alt=media",
                "the export names its bucket: the path is that bucket's")
    }

    /// Real Storage exports of two emulator versions (a bucket folder with URL-encoded
    /// names; the bucket and name URL-encoded flat): their objects are folder placeholders
    /// (`users/`), none a photo; the bucket they name is the one storage paths are in.
    @Test(arguments: ["bsclibrary-2021", "bsclibrary-2022"])
    func realStorageExportsAreWalkedAsTheEmulatorWalksThem(fixture: String) throws {
        let export = try FirestoreExport.locate(Self.fixture(fixture))
        let folder = try #require(export.storage)
        var storage = FirebaseStorage()
        storage.add(exportFolder: folder)
        #expect(storage.blobs.isEmpty && storage.missingBlobs.isEmpty)
        #expect(storage.bucket == "default-bucket")
    }

    /// A subcollection named as the people's collection (`security_groups/user/user/<uid>`,
    /// its `name` a map of permissions) is another collection: the people are read from the
    /// top-level one, each once, their names whole.
    @Test func aSubcollectionNamedAsThePeoplesIsNotThem() throws {
        let out = try generate(["--users", "30", "--same-name-subcollection", "--collection", "user", "--photo-base", "http://127.0.0.1:9/p"])
        for map in [[], ["users=user"]] {
            let read = try read(FirestoreReader(path: out, map: try FieldMap(parsing: map)))
            #expect(read.profiles.count == 30)
            #expect(read.profiles.allSatisfy { $0.displayName.split(separator: " ").count == 2 }, "\(read.profiles.map(\.displayName))")
            #expect(read.notes.contains { $0.contains("people from collection \"user\" (30 documents") }, "\(read.notes)")
            #expect(read.bad.isEmpty, "\(read.bad.prefix(3))")
        }
    }

    /// An export made on Windows names its kind metadata with backslashes
    /// (`all_namespaces\all_kinds\…`, as four real exports do): found, no false loss.
    @Test func anExportMadeOnWindowsIsFoundWhole() throws {
        let root = try copy("hedwig")
        let overall = root + "/firestore_export/firestore_export.overall_export_metadata"
        var records = try #require(MetadataMessages.logRecords(Array(try Data(contentsOf: URL(fileURLWithPath: overall)))))
        records[1] = records[1].map { $0 == UInt8(ascii: "/") ? UInt8(ascii: "\\") : $0 }
        var file: [UInt8] = []
        for record in records {
            let crc = CRC32C.masked(([1] + record).withUnsafeBytes { CRC32C.checksum($0) })
            file += withUnsafeBytes(of: crc.littleEndian, Array.init) + [UInt8(record.count & 0xFF), UInt8(record.count >> 8), 1] + record
        }
        try Data(file).write(to: URL(fileURLWithPath: overall))
        #expect(String(decoding: file, as: UTF8.self).contains("all_namespaces\\all_kinds"))
        let read = try read(FirestoreReader(path: root))
        #expect(read.bad.isEmpty, "\(read.bad)")
        #expect(read.counts.map(\.stated) == [3] && read.counts.map(\.read) == [3])
    }

    /// A shop's items (a name, an `id` and a `url` each) are not people; nor is a plain `id`
    /// field a mark of one.
    @Test func aShopsItemsWithAnIDAreNotPeople() throws {
        let out = try generate(["--users", "0", "--from-json", try productsJSON(), "--keep-fields", "--collection", "features", "--photo-base", ""])
        #expect(throws: ExportError.self) { try self.read(FirestoreReader(path: out)) }
    }

    /// A hostile export's metadata naming files elsewhere (/dev/zero, ../../…): each a bad
    /// record, never opened; the export's own file read.
    @Test func metadataNamingFilesElsewhereIsNotFollowed() throws {
        let out = try generate(["--users", "5", "--photo-base", ""])
        let kind = out + "/firestore_export/all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata"
        func field(_ number: UInt8, _ text: String) -> [UInt8] { [number << 3 | 2, UInt8(text.utf8.count)] + Array(text.utf8) }
        let files = field(1, "") + field(2, "output-0") + field(2, "/dev/zero") + field(2, "../../../../etc/hostname")
        try Data([0x12, UInt8(files.count)] + files).write(to: URL(fileURLWithPath: kind))
        let read = try read(FirestoreReader(path: out))
        #expect(read.profiles.count == 5)
        #expect(read.bad.filter { $0.reason.contains("which is not a file beside it (not read)") }.count == 2, "\(read.bad)")
        #expect(read.counts.map(\.read) == [5])
    }

    /// A Storage blob that is a link (to /dev/zero, to a private picture elsewhere) is not
    /// read; values that are not storage paths ("N/A", "default", a `DATA:` URI, `tel:`)
    /// are never made into download URLs.
    @Test func linksAndNonPathsAreNotStoragePhotos() throws {
        let photos = try storagePhotos()
        let out = try generate(["--users", "2", "--storage", "2", "--storage-photos", photos.folder, "--storage-refs", "path", "--storage-layout", "nested", "--photo-base", ""])
        let blob = out + "/storage_export/blobs/demo-project.appspot.com/users/u1/avatar.jpg"
        try FileManager.default.removeItem(atPath: blob)
        try FileManager.default.createSymbolicLink(atPath: blob, withDestinationPath: "/dev/zero")
        let read = try read(FirestoreReader(path: out))
        #expect(read.bad.contains { $0.reason.contains("users/u1/avatar.jpg") && $0.reason.contains("whose blob is missing") }, "a link is no blob: \(read.bad)")
        var storage = FirebaseStorage(bucket: "my-app.appspot.com")
        storage.add(exportFolder: out + "/storage_export")
        for value in ["N/A", "default", "DATA:image/png;base64,iVBOR", "tel:+15550100", "C:/photos/a.jpg", "../a.jpg", "avatar"] {
            #expect(storage.object(value) == nil, "\(value)")
        }
        #expect(storage.object("avatars/u1")?.name == "avatars/u1")
        #expect(storage.object("avatar.png")?.name == "avatar.png")
        // With a bucket and no objects: a path (even one starting with an h) downloads, a URL stays itself.
        let bucketOnly = FirebaseStorage(bucket: "my-app.appspot.com")
        if case .success(.url(let url, _))? = bucketOnly.resolve("headshots/u1.jpg", limits: ReaderLimits()) {
            #expect(url == "https://firebasestorage.googleapis.com/v0/b/my-app.appspot.com/o/headshots%2Fu1.jpg?alt=media")
        } else {
            Issue.record("a storage path starting with h was not resolved")
        }
        #expect(bucketOnly.resolve("https://cdn.example.com/a.jpg", limits: ReaderLimits()) == nil)
    }
}

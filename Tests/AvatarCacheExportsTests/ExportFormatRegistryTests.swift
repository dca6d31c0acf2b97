import Foundation
import Testing
@testable import AvatarCacheExports
import AvatarCacheTestKit

/// The registry of formats (`ExportFormat.registered`) is the one list of them: the
/// formats, their names, their readers and detection all come from it.
@Suite struct ExportFormatRegistryTests {
    @Test func theFormatsAreTheRegisteredReaders() throws {
        let names = ExportFormat.registered.map { $0.format.rawValue }
        #expect(Set(names).count == names.count, "one reader a name: \(names)")
        #expect(ExportFormat.allCases == ExportFormat.registered.map { $0.format })
        #expect(Set(ExportFormat.allCases) == [.nexusUsers, .nexusConversations, .monica, .jami, .firestore, .firebaseAuth],
                "every declared format is registered")
        for kind in ExportFormat.registered {
            #expect(ExportFormat(rawValue: kind.format.rawValue) == kind.format)
            #expect(ObjectIdentifier(kind.format.kind) == ObjectIdentifier(kind))
            let reader = kind.format.reader(path: "/nonexistent", limits: ReaderLimits())
            #expect(ObjectIdentifier(type(of: reader)) == ObjectIdentifier(kind), "\(kind.format) makes its own reader")
            for text in [kind.summary, kind.evidence] {
                #expect(!text.isEmpty && !text.contains("\n"), "\(kind.format): one line")
            }
        }
        for line in ExportFormat.detectionHelp.split(separator: "\n").dropFirst() {
            #expect(line.count <= 80, "a line of --help in 80 columns: \(line)")
        }
        #expect(ExportFormat(rawValue: "vcard") == nil, "only a registered name is a format")
    }

    @Test func aFormatIsWrittenAsItsName() throws {
        let data = try JSONEncoder().encode([ExportFormat.monica, .firebaseAuth])
        #expect(String(decoding: data, as: UTF8.self) == #"["monica","firebase-auth"]"#)
        #expect(try JSONDecoder().decode([ExportFormat].self, from: data) == [.monica, .firebaseAuth])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([ExportFormat].self, from: Data(#"["vcard"]"#.utf8)) }
    }

    /// One input of each format, and what it is detected as.
    static let inputs: [(name: String, text: String?, format: ExportFormat)] = [
        ("firestore/firebase-export-metadata.json", #"{"version": "13.0.0"}"#, .firestore),
        ("users.export_metadata", "", .firestore),
        ("card.vcf", "not looked at", .jami),
        ("card.txt", "\u{FEFF}  begin:vcard\nFN:Ann\nEND:VCARD\n", .jami),
        ("cards/a.vcard", "BEGIN:VCARD\nEND:VCARD\n", .jami),
        ("accounts.json", #"{"kind": "identitytoolkit#DownloadAccountResponse", "users": [{"localId": "1", "displayName": "Ann"}]}"#, .firebaseAuth),
        ("accounts.csv", "1,a@x,true,,,Ann,https://h/a.jpg" + String(repeating: ",", count: 19) + "\n", .firebaseAuth),
        ("conversations.json", #"[{"participantIds": ["a"], "participants": {"a": {"displayName": "Ann"}}}]"#, .nexusConversations),
        ("contacts.json", #"{"data": [{"id": 1, "first_name": "Ann"}]}"#, .monica),
        ("pages/page-1.json", #"{"data": [{"id": 1, "information": {}}]}"#, .monica),
        ("users.json", #"[{"id": "a", "displayName": "Ann", "profileImageUrl": "https://h/a.jpg"}]"#, .nexusUsers),
    ]

    func write(_ inputs: [(name: String, text: String?, format: ExportFormat)], in directory: URL) throws {
        for input in inputs {
            let url = directory.appendingPathComponent(input.name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((input.text ?? "").utf8).write(to: url)
        }
    }

    @Test func detectionIsTheRegistrysFirstThatRecognises() throws {
        let directory = try Fixtures.temporaryDirectory("registry")
        defer { try? FileManager.default.removeItem(at: directory) }
        try write(Self.inputs, in: directory)
        var recognisedBy: Set<ExportFormat> = []
        let paths = Self.inputs.map { input -> (String, ExportFormat) in
            let path = directory.appendingPathComponent(input.name).path
            // The folders, told by what they hold.
            return (input.name.hasPrefix("firestore/") || input.name.hasPrefix("cards/") || input.name.hasPrefix("pages/")
                    ? (path as NSString).deletingLastPathComponent : path, input.format)
        }
        for (path, format) in paths {
            #expect(try ExportFormat.detect(path: path) == format, "\(path)")
            let sample = try ExportSample(path: path)
            let first = try ExportFormat.registered.first { try $0.recognises(sample) }
            #expect(first?.format == format, "\(path): the registry's first that recognises it")
            #expect(try format.kind.recognises(sample), "\(path): \(format) recognises it")
            recognisedBy.insert(format)
        }
        #expect(recognisedBy == Set(ExportFormat.allCases), "an input of every format")
        // Order decides where two recognise one input: Auth's and the conversations'
        // "users" and "displayName" are NexusAI users' keys too.
        for name in ["accounts.json", "conversations.json"] {
            let sample = try ExportSample(path: directory.appendingPathComponent(name).path)
            #expect(try NexusUsersReader.recognises(sample), "\(name)")
            #expect(try ExportFormat.detect(path: sample.path) != .nexusUsers, "\(name)")
        }
    }

    @Test func aFolderNoFormatRecognisesIsNamedOrJamis() throws {
        let directory = try Fixtures.temporaryDirectory("registry-folders")
        defer { try? FileManager.default.removeItem(at: directory) }
        let users = directory.appendingPathComponent("users")
        try write([("users/a.json", #"[{"id": "a", "displayName": "Ann"}]"#, .nexusUsers), ("empty/notes.txt", "", .jami)], in: directory)
        do {
            _ = try ExportFormat.detect(path: users.path)
            Issue.record("a folder of NexusAI users is not read")
        } catch let error as ExportError {
            #expect(error.reason == "a folder of nexus-users files: give the files (a glob like \(users.path)/*.json); folders are read for Jami vCards and Monica pages")
        }
        // Nothing a folder format reads: Jami's reader says what is missing when it reads.
        #expect(try ExportFormat.detect(path: directory.appendingPathComponent("empty").path) == .jami)
    }

    @Test func theErrorListsEveryFormatAndHowItIsTold() throws {
        let directory = try Fixtures.temporaryDirectory("registry-unknown")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("export.txt").path
        try Data(#"{"members": []}"#.utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try ExportFormat.detect(path: path)
            Issue.record("an export of no format is not read")
        } catch let error as ExportError {
            #expect(error.reason.contains(#"it starts with "{"members": []}""#), "\(error.reason)")
            for kind in ExportFormat.registered {
                #expect(error.reason.contains("\(kind.format.rawValue): \(kind.evidence)"), "\(kind.format) in \(error.reason)")
            }
            #expect(error.reason.hasSuffix("pass --format " + ExportFormat.allCases.map(\.rawValue).joined(separator: "|")))
        }
        #expect(throws: ExportError.self) { try ExportFormat.detect(path: directory.appendingPathComponent("absent").path) }
    }
}

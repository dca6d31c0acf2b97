import Foundation
import AvatarCacheExports
import AvatarCacheModel

/// Paths and bytes the tests of every layer share: the committed sample photos and
/// fixtures, scratch directories, an export's records read whole.
package enum Fixtures {
    package static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file of Tests/Fixtures (its README says where each came from).
    package static func file(_ path: String) -> URL {
        repositoryRoot.appendingPathComponent("Tests/Fixtures/\(path)")
    }

    package static func photo(_ name: String) throws -> [UInt8] {
        let url = repositoryRoot.appendingPathComponent("samples/photos/\(name)")
        return try [UInt8](Data(contentsOf: url))
    }

    /// A new empty directory under the system temporary directory.
    package static func temporaryDirectory(_ label: String = "test") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("avatar-cache-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes a NexusAI users export (`{"users": [...]}`) and returns its path.
    package static func writeUsersExport(_ users: [(id: String, name: String, url: String?)], in directory: URL, name: String = "users.json") throws -> String {
        var records: [[String: String]] = []
        for user in users {
            var record = ["id": user.id, "displayName": user.name, "email": "\(user.id)@example.com"]
            if let url = user.url { record["profileImageUrl"] = url }
            records.append(record)
        }
        let data = try JSONSerialization.data(withJSONObject: ["users": records], options: [.prettyPrinted])
        let path = directory.appendingPathComponent(name).path
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A documentation page of the repository (README.md, docs/…), as text.
    package static func page(_ path: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// Everything a reader yields, in order: its profiles, bad records, notes, and what its
    /// input states it holds against what was read.
    package struct ReadResult {
        package var profiles: [Profile] = []
        package var bad: [BadRecord] = []
        package var notes: [String] = []
        package var counts: [InputCount] = []
    }

    package static func readAll(_ reader: ExportReader) throws -> ReadResult {
        var result = ReadResult()
        try reader.read { item in
            switch item {
            case .profile(let profile): result.profiles.append(profile)
            case .bad(let record): result.bad.append(record)
            case .note(let note): result.notes.append(note)
            case .count(let count): result.counts.append(count)
            }
        }
        return result
    }

    /// Its profiles and its bad records.
    package static func read(_ reader: ExportReader) throws -> (profiles: [Profile], bad: [BadRecord]) {
        let result = try readAll(reader)
        return (result.profiles, result.bad)
    }

    /// A real Firebase export of Tests/Fixtures/firebase (its README says whose).
    package static func firebaseExport(_ path: String) -> String {
        repositoryRoot.appendingPathComponent("Tests/Fixtures/firebase/\(path)").path
    }

    /// A copy of one, in `scratch`, to damage.
    package static func copyFirebaseExport(_ path: String, into scratch: URL) throws -> String {
        let target = scratch.appendingPathComponent(UUID().uuidString).path
        try FileManager.default.copyItem(atPath: firebaseExport(path), toPath: target)
        return target
    }

    package struct GeneratorFailed: Error, CustomStringConvertible {
        package var description: String
    }

    /// Runs scripts/benchmark/firestore_export.py with `arguments` into `out` (a new
    /// folder of `scratch` when nil); its folder.
    package static func generateFirestoreExport(_ arguments: [String], in scratch: URL, into out: String? = nil) throws -> String {
        let out = out ?? scratch.appendingPathComponent("generated-\(UUID().uuidString)").path
        let result = try Binary.run([repositoryRoot.appendingPathComponent("scripts/benchmark/firestore_export.py").path, out] + arguments,
                                    executable: URL(fileURLWithPath: "/usr/bin/python3"))
        guard result.status == 0 else { throw GeneratorFailed(description: "firestore_export.py \(arguments.joined(separator: " ")): \(result.stderr)") }
        return out
    }

    package static func fileNames(in cache: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: cache.path).sorted()
    }

    /// A Monica contact as its API writes one (its avatar's source and URL as given).
    package static func monicaContact(_ id: Int, _ first: String, _ last: String, source: String = "default", url: String = "") -> String {
        """
        {"id": \(id), "object": "contact", "first_name": "\(first)", "last_name": "\(last)",
         "information": {"avatar": {"url": "\(url)", "source": "\(source)", "default_avatar_color": "#b3d5fe"}}}
        """
    }
}

import Logging

extension Logger {
    package static let test: Logger = {
        var logger = Logger(label: "avatar-cache-tests")
        logger.logLevel = .critical
        return logger
    }()
}

/// Whether this process may make private namespaces (`unshare -n`, `unshare -m`): root,
/// or a kernel that lets users. Tests that need one are skipped, saying so, where it
/// cannot be made (a container without the capability), rather than failing.
package enum Namespaces {
    package static func canUnshare(_ flag: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = [flag, "--", "/bin/true"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    package static let network = canUnshare("-n")
    package static let mount = canUnshare("-m")
}

import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheModel
import AvatarCacheTestKit

/// Every real Firebase export of Tests/Fixtures/firebase read without a map, as an operator
/// pointing the tool at their app's export reads it: the collection chosen and each
/// person's (id, name, photo), against `people.tsv` there, the table of what a person
/// reading the documents writes. A change to the chooser that reads any of them
/// differently fails here.
@Suite struct RealExportPeopleTests {
    static let exports = ["bsclibrary-2021", "bsclibrary-2022", "daily-cat", "ember-cloud-firestore-adapter", "faker-app",
                          "hedwig", "journey-home", "movielens-gcloud", "savage", "the-bulletin"]

    /// The rows of one export: where its people came from (the collection chosen, Auth
    /// alone, or the error that stopped the read), then one row per person.
    static func rows(_ export: String) -> [String] { rows(export, path: Fixtures.firebaseExport(export)) }

    static func rows(_ export: String, path: String) -> [String] {
        let read: Fixtures.ReadResult
        do {
            read = try Fixtures.readAll(FirestoreReader(path: path))
        } catch let error as ExportError {
            return ["\(export)\tstops\t\(error.reason.prefix { $0 != ";" })"]
        } catch {
            return ["\(export)\tstops\t\(error)"]
        }
        var source = "Auth alone"
        if let note = read.notes.first(where: { $0.contains(": people from collection \"") }),
           let start = note.range(of: "people from collection \"")?.upperBound {
            source = "collection \(note[start...].prefix { $0 != "\"" })"
        }
        var rows = ["\(export)\tpeople from\t\(source)"]
        for profile in read.profiles {
            let photo: String
            switch profile.photo {
            case .url(let url, _)?: photo = url
            case .inline(let inline)?: photo = "inline \(inline.bytes.count) bytes"
            case nil: photo = ""
            }
            rows.append("\(export)\t\(profile.id)\t\(profile.displayName)\t\(photo)")
        }
        return rows
    }

    @Test func everyRealExportReadsItsPeopleAsAPersonWould() throws {
        let rows = Self.exports.flatMap(Self.rows)
        let environment = ProcessInfo.processInfo.environment
        // REAL_EXPORT_ROWS=<file>: the rows as read, to review against the table.
        if let out = environment["REAL_EXPORT_ROWS"] {
            try (rows.joined(separator: "\n") + "\n").write(toFile: out, atomically: true, encoding: .utf8)
        }
        // OTHER_EXPORTS=<folder> OTHER_EXPORT_ROWS=<file>: the same rows for every export
        // root in a folder kept outside the repository (real exports whose licence does not
        // let them be committed), to compare a change's reading of them before and after.
        if let folder = environment["OTHER_EXPORTS"], let out = environment["OTHER_EXPORT_ROWS"] {
            let others = try FileManager.default.contentsOfDirectory(atPath: folder).sorted().flatMap { Self.rows($0, path: folder + "/" + $0) }
            try (others.joined(separator: "\n") + "\n").write(toFile: out, atomically: true, encoding: .utf8)
        }
        let table = try String(contentsOf: Fixtures.file("firebase/people.tsv"), encoding: .utf8)
        let expected = table.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        #expect(rows == expected, "\(Set(rows).symmetricDifference(expected).sorted().joined(separator: "\n"))")
        // Every export of the folder is in the table.
        let folders = try FileManager.default.contentsOfDirectory(atPath: Fixtures.file("firebase").path).filter { !$0.contains(".") }
        #expect(Set(folders) == Set(Self.exports))
    }
}

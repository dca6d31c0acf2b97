import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheModel
import AvatarCacheTestKit

/// `inspect` on every committed real Firebase export: what it shows is what a warm
/// reads, and the `--map` line it prints reads the same people when given back.
@Suite struct ExportInspectionTests {
    func people(_ path: String, map: FieldMap) throws -> [String] {
        try Fixtures.readAll(FirestoreReader(path: path, map: map)).profiles.map { "\($0.id)\t\($0.displayName)\t\($0.photoURL ?? "")" }
    }

    @Test(arguments: RealExportPeopleTests.exports)
    func inspectShowsTheChoiceAndItsMapReadsTheSamePeople(export: String) throws {
        let path = Fixtures.firebaseExport(export)
        let started = Date()
        let inspection: ExportInspection
        do {
            inspection = try ExportInspection.inspect(path, format: .firestore, limits: ReaderLimits(), map: FieldMap())
        } catch let error as ExportError {
            // The exports whose read stops (people.tsv says so) stop here too, saying why.
            let table = try String(contentsOf: Fixtures.file("firebase/people.tsv"), encoding: .utf8)
            #expect(table.contains("\(export)\tstops\t\(error.reason.prefix { $0 != ";" })"), "\(error)")
            return
        }
        #expect(Date().timeIntervalSince(started) < 5, "inspect took \(Date().timeIntervalSince(started)) s")
        let unmapped = try people(path, map: FieldMap())
        #expect(inspection.people == unmapped.count)
        #expect(inspection.sample.map(\.id) == Array(unmapped.prefix(ExportInspection.sampleSize).map { String($0.prefix { $0 != "\t" }) }))
        #expect(inspection.sample.allSatisfy { !$0.initials.isEmpty })
        // Its people from a collection: the choice is shown, and its map reads them again.
        let table = try String(contentsOf: Fixtures.file("firebase/people.tsv"), encoding: .utf8)
        if table.contains("\(export)\tpeople from\tcollection ") {
            let choice = try #require(inspection.choices.first, "\(inspection.notes)")
            // The id first; a name where the documents hold one (bsclibrary-2021's comes from its Auth account).
            #expect(choice.roles.first?.key == "id", "\(choice.roles)")
            if inspection.sample.contains(where: { !$0.name.isEmpty }) && export != "bsclibrary-2021" {
                #expect(choice.roles.contains { $0.key == "name" || $0.key == "given-name" }, "\(choice.roles)")
            }
            #expect(choice.map.first == "users=\(choice.collection)")
            let mapped = try people(path, map: try FieldMap(parsing: choice.map))
            #expect(mapped == unmapped, "\(choice.mapLine)")
        } else {
            #expect(inspection.choices.isEmpty)
        }
        // What an Auth export holds of passwords is never shown.
        let encoded = String(decoding: try JSONEncoder().encode(inspection), as: UTF8.self)
        #expect(!encoded.contains("passwordHash") && !encoded.lowercased().contains("salt="), "\(encoded)")
    }

    /// A chosen document id comes back as `id=__name__`; a chooser's field as its path.
    @Test func theMapLineNamesTheDocumentIDAsFirestoreDoes() throws {
        let inspection = try ExportInspection.inspect(Fixtures.firebaseExport("hedwig"), format: .firestore, limits: ReaderLimits(), map: FieldMap())
        let choice = try #require(inspection.choices.first)
        #expect(choice.map == ["users=users", "id=__name__", "name=displayName"])
        #expect(choice.mapLine == "--map users=users --map id=__name__ --map name=displayName")
        #expect(choice.roles.first { $0.key == "name" }?.evidence == "on 3 of 3 documents, 3 of them full names, 3 the display name of a Firebase Auth account")
    }
}

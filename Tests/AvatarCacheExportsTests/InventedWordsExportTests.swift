import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheModel
import AvatarCacheTestKit

/// Exports whose collections and fields are named with invented words, so that only
/// the values and the references can tell where the people are: real names in many
/// scripts, e-mail addresses, companies, a value every document shares, ids, image URLs,
/// and another collection pointing at the people by their document ids. Each seed deals
/// the words to the roles anew, and the companies to the people.
extension PeopleChooserTests {
    static let inventedWords = ["quazzle", "mimbo", "trelk", "snarp", "drimble", "wub", "florbs", "gnarls", "yoink", "blap",
                                "zenk", "frobby", "plonk", "skree", "vunt", "grelb", "thwomp", "kazoo"]
    static let peopleNames = ["Ada Lovelace", "José Álvarez", "Zoë Brandt", "Иван Петров", "Ольга Смирнова", "Νίκος Παππάς",
                              "محمد علي", "فاطمة الزهراء", "דוד כהן", "अमित शर्मा", "山田太郎", "王小明", "김민준", "สมชาย ใจดี",
                              "Chiara Dell'Acqua", "Nguyễn Văn An"]
    static let companies = ["Initech GmbH", "Umbrella S.A.", "Globex LLC", "Acme Ltd", "株式会社ソニー", "ООО Ромашка", "Hooli Inc."]

    /// One invented export: the documents, and what a person reading them finds (the
    /// people's collection, and each person's id, name and photo).
    struct InventedExport {
        var documents: [(path: String, fields: [String: Any])] = []
        var collection = ""
        var people: [String: (name: String, photo: String)] = [:]
    }

    static func inventedExport(seed: Int) -> InventedExport {
        var random = SeededRandom(seed: UInt64(seed) &+ 1_000)
        var words = inventedWords
        for index in words.indices.reversed() { words.swapAt(index, random.below(index + 1)) }
        let (people, pointers) = (words[0], words[1])
        let (name, email, company, shared, photo, code, phone, pointer, text) = (words[2], words[3], words[4], words[5], words[6], words[7], words[8], words[9], words[10])
        var export = InventedExport(collection: people)
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        let count = 8 + random.below(8)
        var ids: [String] = []
        for index in 0..<count {
            let id = String((0..<20).map { _ in letters[random.below(letters.count)] })
            ids.append(id)
            let person = peopleNames[(index + seed) % peopleNames.count]
            let image = "http://127.0.0.1:9/media/\(seed)/\(index).jpg"
            let fields: [(String, Any)] = [(name, person), (email, "person\(index)@mail.example"), (company, companies[random.below(companies.count)]),
                                           (shared, "Zorblax Standard"), (photo, image), (code, "EMP-\(100_000 + index * 7)"),
                                           (phone, "+1 555 01\(10 + index)")]
            export.documents.append(("\(people)/\(id)", Dictionary(uniqueKeysWithValues: fields)))
            export.people[id] = (person, image)
        }
        for index in 0..<(count * 2) {
            export.documents.append(("\(pointers)/\(index)", [pointer: ids[random.below(ids.count)], text: "lorem ipsum dolor sit \(index)"]))
        }
        return export
    }

    @Test(arguments: 0..<6)
    func onlyTheValuesAndReferencesTellThePeople(seed: Int) throws {
        let invented = Self.inventedExport(seed: seed)
        let read = try read(try export(invented.documents))
        let note = try peopleNote(read)
        #expect(note.contains("people from collection \"\(invented.collection)\""), "\(note)")
        #expect(read.profiles.count == invented.people.count, "\(note)")
        for profile in read.profiles {
            #expect(invented.people[profile.id]?.name == profile.displayName, "\(profile.id): \(profile.displayName); \(note)")
            #expect(invented.people[profile.id]?.photo == profile.photoURL, "\(profile.id): \(profile.photoURL ?? "no photo"); \(note)")
        }
    }
}

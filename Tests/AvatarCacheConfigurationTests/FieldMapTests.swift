import Foundation
import Testing
@testable import AvatarCacheConfiguration
@testable import AvatarCacheExports

/// The field map (`--map`): its entries and paths, and its pipeline-file form.
@Suite struct FieldMapTests {
    @Test func fieldMapEntriesAndPaths() throws {
        let map = try FieldMap(parsing: ["name=displayName|fullName|username", "photo=profile_photo.downloadUrl", "Given-Name=first", "participants=buyerId+sellerId"])
        #expect(map[.name]?.map { $0.map(\.text) } == [["displayName"], ["fullName"], ["username"]])
        #expect(map[.photo]?.first?.first?.components == [.key("profile_photo"), .key("downloadUrl")])
        #expect(map[.givenName] != nil)
        #expect(map[.participants]?.first?.count == 2)
        #expect(try FieldPath(parsing: "imagePaths[0]").components == [.key("imagePaths"), .index(0)])
        #expect(try FieldPath(parsing: "a.b[2].c").components == [.key("a"), .key("b"), .index(2), .key("c")])
        #expect(throws: FieldMap.Error.self) { try FieldMap(parsing: ["photo"]) }
        #expect(throws: FieldMap.Error.self) { try FieldMap(parsing: ["colour-of-hair=x"]) }
        #expect(throws: FieldMap.Error.self) { try FieldMap(parsing: ["photo=a[x]"]) }
        #expect(throws: FieldMap.Error.self) { try FieldMap(parsing: ["name=a+b"]) }
        let fields = DocumentFields([("imagePaths", .array([.string("https://x.example/1.jpg")])), ("fullName", .string("Ada"))])
        #expect(try FieldPath(parsing: "imagePaths[0]").value(in: fields) == .string("https://x.example/1.jpg"))
        #expect(try FieldPath(parsing: "imagePaths[1]").value(in: fields) == nil)
        // A pipeline file's map: block.
        let settings = try PipelineFile.parse("cache: c\ninputs: [x.json]\nmap:\n  photo: avatarUrl\n  name: fullName|username\n", file: "p.yml", environment: [:])
        let read = try settings.configuration(environment: [:])
        #expect(read.fieldMap.written == ["photo=avatarUrl", "name=fullName|username"])
        #expect {
            try PipelineFile.parse("cache: c\nmap:\n  colour: x\n", file: "p.yml", environment: [:])
        } throws: { "\($0)".contains("p.yml:3: key \"map\":") && "\($0)".contains("unknown key \"colour\"") }
    }
}

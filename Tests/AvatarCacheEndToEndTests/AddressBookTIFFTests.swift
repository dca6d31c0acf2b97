import Foundation
import Testing
import AvatarCacheImagingTestSupport
import AvatarCacheTestKit

/// An old Mac OS X Address Book card with its photo as inline TIFF, warmed by the binary
/// beside the same TIFF downloaded: the card's photo is shown, the download refused
/// (the decoder itself: AvatarCacheImagingTests' InlineTIFFTests).
@Suite struct AddressBookTIFFTests {
    @Test func anAddressBookCardWithATIFFShowsItsPhotoAndTheSameTIFFDownloadedFails() throws {
        let directory = try Fixtures.temporaryDirectory("tiff")
        defer { try? FileManager.default.removeItem(at: directory) }
        let bytes = SampleImages.addressBookTIFF()
        // Mac OS X Address Book's form: `PHOTO;BASE64:` on its own line, the data folded below.
        var folded = ""
        for (index, character) in Data(bytes).base64EncodedString().enumerated() {
            if index % 76 == 0 { folded += "\r\n  " }
            folded.append(character)
        }
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nN:Appleseed;Johnny;;;\r\nFN:Johnny Appleseed\r\nPHOTO;BASE64:\(folded)\r\nEND:VCARD\r\n"
        let cardPath = directory.appendingPathComponent("address-book.vcf").path
        try Data(card.utf8).write(to: URL(fileURLWithPath: cardPath))
        let server = try FixtureServer(routes: ["/photo.tiff": .ok(bytes: SampleImages.addressBookTIFF(width: 40, height: 40))])
        defer { server.shutdown() }
        let users = try Fixtures.writeUsersExport([(id: "web", name: "Web User", url: server.url("/photo.tiff"))], in: directory)
        let report = directory.appendingPathComponent("report.json").path
        let result = try Binary.run(["warm", users, cardPath, "--cache", directory.appendingPathComponent("cache").path,
                                       "--allow-private-networks", "--report", report])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        #expect(json["inlinePhotos"] as? Int == 1 && json["profilesWithPhoto"] as? Int == 1, "\(json)")
        #expect(json["failuresByClass"] as? [String: Int] == ["unsupportedFormat": 1])
        let failure = try #require((json["failures"] as? [[String: Any]])?.first)
        #expect((failure["reason"] as? String)?.contains("TIFF image") == true, "\(failure)")
    }
}

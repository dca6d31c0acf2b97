import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCachePipeline
import AvatarCacheTestKit

/// What Monica's pages and vCard files state they hold, against what is read: counted per
/// input (a vCard file's BEGIN:VCARD lines), or across the inputs that state one number
/// together (Monica's pages, saved one a file and given as a glob: each states the whole
/// `meta.total`).
@Suite final class StatedCountTests {
    let scratch: URL

    init() throws { scratch = try Fixtures.temporaryDirectory("stated-counts") }

    deinit { try? FileManager.default.removeItem(at: scratch) }

    func counts(_ reader: ExportReader) throws -> [InputCount] {
        var counts: [InputCount] = []
        try reader.read { if case .count(let count) = $0 { counts.append(count) } }
        return counts
    }

    func sample(_ path: String) -> String { Fixtures.repositoryRoot.appendingPathComponent("samples/\(path)").path }

    func report() -> RunReport {
        RunReport(startedAt: Date(), exports: [], cacheDirectory: "", budgetBytes: 0)
    }

    /// A report of a read that counted `counts`, in order.
    func reported(_ counts: [InputCount]) -> RunReport {
        var read = ReadStage.Outcome()
        for count in counts { read.record(count) }
        var run = report()
        run.add(read)
        return run
    }

    @Test func monicasPagesAreCountedTogetherAgainstTheirTotal() throws {
        let both = reported(try ["monica/contacts-page-1.json", "monica/contacts-page-2.json"].flatMap { try counts(MonicaReader(path: sample($0))) })
        #expect(both.inputCounts.count == 1)
        #expect(both.inputCounts.first.map { ($0.read, $0.stated, $0.inputs) } ?? (0, 0, 0) == (14, 14, 2))
        #expect(both.recordsLost == 0)
        #expect(both.countsText == "contacts read 14 of 14 stated")

        let one = reported(try counts(MonicaReader(path: sample("monica/contacts-page-1.json"))))
        #expect(one.recordsLost == 6)
        #expect(one.inputCounts.first?.lossReason == "meta.total of the pages states 14 contacts; 8 were read from 1 input: 6 lost")
        #expect(one.countsText == "contacts read 8 of 14 stated (6 LOST)")
    }

    /// A folder of pages whose meta says there are three: the one missing is named.
    @Test func aMissingPageIsNamed() throws {
        let folder = scratch.appendingPathComponent("pages").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for page in [1, 3] {
            let contacts = (0..<2).map { ["id": page * 10 + $0, "object": "contact", "first_name": "P\(page)", "last_name": "C\($0)",
                                          "information": ["avatar": ["url": "", "source": "default", "default_avatar_color": "#b3d5fe"]]] as [String: Any] }
            let body: [String: Any] = ["data": contacts, "meta": ["current_page": page, "last_page": 3, "per_page": 2, "total": 6,
                                                                  "path": "https://monica.example.com/api/contacts?token=secret"]]
            try JSONSerialization.data(withJSONObject: body).write(to: URL(fileURLWithPath: "\(folder)/page-\(page).json"))
        }
        let run = reported(try counts(MonicaReader(path: folder)))
        let count = try #require(run.inputCounts.first)
        #expect(count.pages == [1, 3] && count.missingPages == [2])
        #expect(count.lossReason.contains("states 6 contacts; 4 were read from 1 input (page 2 of 3 missing): 2 lost"), "\(count.lossReason)")
        #expect(!count.statedBy.contains("secret"), "the list's URL is shown without its credentials: \(count.statedBy)")
    }

    /// A hostile page's numbers are bounded: a last page of 10^15 names at most 1,000
    /// missing pages, none past one a stated record.
    @Test func aHostilePagesNumbersAreBounded() {
        var count = InputCount(source: "p", statedBy: "meta.total", unit: "contacts", stated: 100, read: 1)
        count.shared = true
        count.pages = [1]
        count.lastPage = 1_000_000_000_000_000
        let missing = count.missingPages
        #expect(missing.count == 99 && missing.last == 100)
        count.stated = 1 << 40
        #expect(count.missingPages.count == 1000)
    }

    /// The samples' vCards: nine begun, one cut short (its card lost, a bad record).
    @Test func vCardFilesAreCountedByTheirCards() throws {
        let counts = try counts(JamiReader(path: sample("jami")))
        #expect(counts.map { ($0.stated, $0.read, $0.unit) }.first ?? (0, 0, "") == (9, 8, "cards"))
        #expect(counts.first?.statedBy == "its BEGIN:VCARD lines")
    }
}

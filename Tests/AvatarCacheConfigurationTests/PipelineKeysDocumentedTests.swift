import Foundation
import Testing
@testable import AvatarCacheConfiguration
import AvatarCacheTestKit

/// The pages name every pipeline-file key (the commands, flags and exit codes the binary
/// knows: the end-to-end DocumentationTests).
@Suite struct PipelineKeysDocumentedTests {
    @Test func everyPipelineKeyIsDocumented() throws {
        let pages = try Fixtures.page("docs/guide.md") + Fixtures.page("docs/commands.md")
        let missing = PipelineFile.keys.keys.sorted().filter {
            !(pages.contains("`\($0)`") || pages.contains("`--\($0) ") || pages.contains("`--\($0)`"))
        }
        #expect(missing.isEmpty, "pipeline keys docs/guide.md and docs/commands.md do not name: \(missing)")
        #expect(PipelineFile.keys.count > 40)
    }
}

import AvatarCacheExports
import Testing
import AvatarCacheTestKit

/// The built binary's `warm --help` names every registered format (the help's text from
/// the registry: `ExportFormatHelpTests`, in the engine's tests).
@Suite struct BinaryFormatHelpTests {
    @Test func theBinarysWarmHelpNamesEveryFormat() throws {
        let usage = try Binary.run(["warm", "--help"]).stdout
        for format in ExportFormat.allCases.map(\.rawValue) {
            #expect(usage.contains(format), "warm --help names \(format)")
        }
    }
}

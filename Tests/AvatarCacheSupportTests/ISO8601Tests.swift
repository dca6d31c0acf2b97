import Foundation
import Testing
@testable import AvatarCacheSupport

/// The timestamps metadata.json and the index's document write and read (RFC 3339, by
/// hand): Foundation's text for every date, read back to the millisecond, offsets and
/// whole seconds read, what is not a date refused.
struct ISO8601Tests {
    @Test func timestampsRoundTripAndMatchFoundation() {
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var generator = SystemRandomNumberGenerator()
        // Dates from 1900 to 2400, leap days and the millisecond edge included.
        let fixed: [Double] = [0, -1, 951_782_400, 4_107_542_399.999, -2_208_988_800, 1_700_000_000.5, 13_569_465_600]
        let random = (0..<2000).map { _ in Double(Int64.random(in: -2_208_988_800_000...13_569_465_600_000, using: &generator)) / 1000 }
        for seconds in fixed + random {
            let date = Date(timeIntervalSince1970: seconds)
            let text = ISO8601.format(date)
            #expect(text == reference.string(from: date), "\(seconds)")
            let truncated = (seconds * 1000).rounded() / 1000
            let parsed = ISO8601.parse(text)?.timeIntervalSince1970 ?? .nan
            #expect(abs(parsed - truncated) < 0.0005, "\(text) read back as \(parsed)")
        }
    }

    @Test func timestampsWithOffsetsAndWithoutFractions() {
        let cases: [(String, Double?)] = [
            ("2026-11-21T23:45:04Z", 1_795_304_704),
            ("2026-11-21T23:45:04.5Z", 1_795_304_704.5),
            ("2026-11-22T00:45:04+01:00", 1_795_304_704),
            ("2026-11-21T18:15:04-05:30", 1_795_304_704),
            ("2024-02-29T12:00:00Z", 1_709_208_000),
            ("2026-13-01T00:00:00Z", nil),
            ("2026-11-21 23:45:04", nil),
            ("yesterday", nil),
            ("", nil),
        ]
        // Not a day: the hand-written reader refuses it (Foundation's, behind it, rolls
        // it over to 1 March).
        #expect("2023-02-29T12:00:00Z".utf8.withContiguousStorageIfAvailable { ISO8601.parseFast($0) } == .some(nil))
        for (text, expected) in cases {
            let parsed = ISO8601.parse(text)?.timeIntervalSince1970
            #expect(parsed == expected, "\(text) read as \(String(describing: parsed))")
        }
    }
}

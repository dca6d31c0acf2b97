import Foundation
import Testing
@testable import AvatarCacheLookup

/// The tier a view of so many points at a scale is answered with.
@Suite struct LookupTierTests {
    @Test(arguments: [(15.0, 330), (55.0, 330), (150.0, 900), (200.0, 900), (40.0, 330), (56.0, 900)])
    func lookupPicksTheTier(points: Double, tier: Int) {
        #expect(CacheLookup.tier(forViewSize: points, scale: 3, available: [330, 900]) == tier)
    }
}

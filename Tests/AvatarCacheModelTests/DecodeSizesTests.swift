import Testing
import AvatarCacheModel

/// The decode sizes as the cache records them: what the warm writes, the lookup and the
/// document read back; anything else read as not recorded.
@Suite struct DecodeSizesTests {
    @Test func writtenAscendingAndDistinctAndReadBack() {
        #expect(DecodeSizes.text([300, 110, 110, 0, -4]) == "110,300")
        #expect(DecodeSizes.text([0]) == nil && DecodeSizes.text([]) == nil)
        #expect(DecodeSizes.parse("110,300") == [110, 300])
        #expect(DecodeSizes.parse("200,64") == [64, 200])
        #expect(DecodeSizes.parse(DecodeSizes.text([64, 200])!) == [64, 200])
    }

    @Test func whatIsNotAListOfSizesIsNotRecorded() {
        for text in ["", ",", "110,", "110,,300", "a,110", "0", "-5,110", "110;300", " 110"] {
            #expect(DecodeSizes.parse(text) == nil, "\(text)")
        }
    }
}

import Foundation

/// ThumbHash's reference implementation's answers (Tests/Fixtures/thumbhash/reference.json):
/// for each picture its pixels, the hash the reference gives them and the pixels that hash
/// decodes to. The encoder's tests (imaging) and the decoder's (lookup) read the same.
package struct ThumbHashReference: Decodable {
    package struct Picture: Decodable {
        package struct Decoded: Decodable {
            package var width: Int
            package var height: Int
            /// RGBA bytes, base64.
            package var rgba: String
        }
        package var name: String
        package var width: Int
        package var height: Int
        /// RGBA bytes, base64.
        package var rgba: String
        /// The hash, base64.
        package var hash: String
        package var decoded: Decoded
    }
    package var pictures: [Picture]

    /// The reference file, read.
    package static func load() throws -> ThumbHashReference {
        try JSONDecoder().decode(ThumbHashReference.self, from: Data(contentsOf: Fixtures.file("thumbhash/reference.json")))
    }
}

import Foundation
import Testing
@testable import VaultCore
@testable import VaultImaging
@testable import VaultPaper

@Suite struct ImagingTests {
    /// Draws a QR symbol with a 4-module quiet zone at `scale` pixels per module.
    static func render(_ code: QRCode, scale: Int) -> GrayImage {
        var image = GrayImage(width: (code.size + 8) * scale, height: (code.size + 8) * scale)
        for y in 0..<code.size { for x in 0..<code.size where code.isDark(x: x, y: y) {
            image.fill(x: (x + 4) * scale, y: (y + 4) * scale, width: scale, height: scale, value: 0)
        } }
        return image
    }

    @Test func qrRoundTripsThroughZbar() throws {
        let payload = Array("nsec1lqt48lfawqu2gtwfzh0q25qkhfmgfur3suk5r632shu6fm8y9z9sncnftt".utf8)
        let code = try QRCode(payload: payload, level: .quartile)
        #expect(code.size == 17 + 4 * code.version)
        #expect(try QRScanner.scan(Self.render(code, scale: 4)) == [payload])
    }

    @Test func noQRCodeFindsNothing() throws {
        #expect(try QRScanner.scan(GrayImage(width: 200, height: 200)).isEmpty)
    }

    @Test func pngRoundTripKeepsPixelsAndResolution() throws {
        var image = GrayImage(width: 37, height: 21, dotsPerInch: 300)
        for index in image.pixels.indices { image.pixels[index] = UInt8(truncatingIfNeeded: index * 7) }
        let png = try image.pngData()
        let decoded = try GrayImage(decoding: png)
        #expect(decoded == image)
    }

    @Test func rejectsWhatIsNotAnImage() {
        #expect(throws: VaultError(.malformedDocument, "")) { try GrayImage(decoding: Array("hello".utf8)) }
        #expect(throws: VaultError(.malformedDocument, "")) { try GrayImage(decoding: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]) }
        #expect(throws: VaultError(.malformedDocument, "")) { try GrayImage(decoding: [0xff, 0xd8, 0xff, 0xe0, 0, 0x10]) }
    }

    /// Found by the fuzz target qr: a PNG whose data fails halfway through the image made
    /// libpng jump out with the row table still allocated. It must be refused as damaged (the
    /// fuzzer's leak check, not this test, sees the memory).
    @Test func aPNGDamagedMidImageIsRefused() throws {
        let folder = TestFiles.testsFolder.deletingLastPathComponent().deletingLastPathComponent()
        let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent("Fuzz/Regressions/qr/png-error-mid-image-leaked-rows.png")))
        #expect(throws: VaultError(.malformedDocument, "")) { try GrayImage(decoding: bytes) }
    }
}

import Foundation
import Testing
@testable import VaultCore
@testable import VaultPaper

/// Machine values on paper (issue 37): ``PageWriter/machineLines`` breaks a key, an npub, an id,
/// a path or a check code only between its groups of four, fills each line, and leaves no lone
/// short group on a last line; the page sets those lines as given.
@Suite struct MachineValueTests {
    /// The indexes of `value` before which a line may break: after each group of four, counted
    /// from the start and again after each `/` and each of the value's own spaces.
    static func groupBreaks(_ value: String) -> Set<Int> {
        var points: Set<Int> = [], run = 0
        for (index, character) in value.enumerated() {
            if character == " " { points.formUnion([index, index + 1]); run = 0; continue }
            run += 1
            if run == 4 || character == "/" { points.insert(index + 1); run = 0 }
        }
        return points
    }

    static func randomValue(_ generator: inout SeededGenerator) -> String {
        let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l")
        let hex = Array("0123456789abcdef")
        func run(_ count: Int, _ from: [Character]) -> String { String((0..<count).map { _ in from.randomElement(using: &generator)! }) }
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: return "npub1" + run(58, alphabet)
        case 1: return "ncryptsec1" + run(Int.random(in: 100...170, using: &generator), alphabet)
        case 2: return "vaults/" + run(64, hex) + ".vault"
        default: return "HVT-SHARE \(Int.random(in: 0..<32768, using: &generator)) " + run(12, hex)
        }
    }

    @Test func valuesBreakOnlyBetweenGroupsAndFitTheirColumn() throws {
        var generator = SeededGenerator(source: SeededRandom(seed: 37))
        let writer = try PageWriter(paper: .a4, gridDotsPerInch: 300)
        var broken = 0
        for _ in 0..<300 {
            let value = Self.randomValue(&generator)
            let style: TextStyle = Bool.random(using: &generator) ? .monoSmall : .monoLarge
            let separator = Bool.random(using: &generator) ? " " : ""
            let width = Double.random(in: 40...520, using: &generator)
            let groupWidth = PageRenderer.advance("0000", style: style)
            guard let lines = try? writer.machineLines("value", value, style: style, width: width, separator: separator) else {
                #expect(width < groupWidth + 0.01, "refused though a group fits: \(value) in \(width) pt")
                continue
            }
            // Exactly the value's characters, with white space only at group boundaries, and
            // each of its own spaces kept.
            #expect(lines.joined().filter { $0 != " " } == value.filter { $0 != " " }, "\(value) → \(lines)")
            let breaks = Self.groupBreaks(value)
            var position = 0
            for (number, line) in lines.enumerated() {
                if number > 0 {
                    #expect(breaks.contains(position), "\(value) breaks inside a group at \(position): \(lines)")
                    if value[value.index(value.startIndex, offsetBy: position)] == " " { position += 1 }  // the break stands for the value's space
                }
                for character in line {
                    if character == " " {
                        #expect(breaks.contains(position), "\(value) has a space inside a group at \(position): \(lines)")
                        if value[value.index(value.startIndex, offsetBy: position)] == " " { position += 1 }
                    } else {
                        #expect(value[value.index(value.startIndex, offsetBy: position)] == character)
                        position += 1
                    }
                }
                #expect(PageRenderer.advance(line, style: style) <= width + 0.01, "\(line) is wider than \(width) pt")
            }
            #expect(position == value.count)
            if lines.count > 1 {
                broken += 1
                let last = lines[lines.count - 1]
                #expect(!(last.count < 4 && !last.contains(" ") && lines[lines.count - 2].count > 4), "a lone short group ends \(value): \(lines)")
            }
        }
        #expect(broken > 100, "the sweep would test few breaks")
    }

    @Test func aValueNarrowerThanItsColumnIsOneLineAsGiven() throws {
        let writer = try PageWriter(paper: .a4, gridDotsPerInch: 300)
        let npub = "npub174p847j8t6zp467hpsped7xkvzpvrd6g4elvndvde6t7dld06vzslh8a5m"
        #expect(try writer.machineLines("npub", npub, style: .monoSmall, width: 500, separator: "") == [npub])
        // 63 characters, 15 groups and 3: never "a5m" alone on the last line.
        let width = PageRenderer.advance(String(npub.prefix(60)), style: .monoSmall) + 1
        let lines = try writer.machineLines("npub", npub, style: .monoSmall, width: width, separator: "")
        #expect(lines == [String(npub.prefix(56)), String(npub.dropFirst(56))])
        #expect(try writer.machineLines("key", "nsec1abcdefgh", style: .monoLarge, width: 500, separator: " ") == ["nsec 1abc defg h"])
    }

    /// Every resolution a sheet takes makes a picture `scan` reads: no more pixels than a
    /// picture may have, on either paper.
    @Test func theLargestResolutionStaysWithinThePictureLimit() {
        for paper in Paper.allCases {
            let inches = (paper.widthMillimetres / 25.4, paper.heightMillimetres / 25.4)
            let dpi = Double(Paper.dotsPerInch.upperBound)
            let pixels = (inches.0 * dpi).rounded() * (inches.1 * dpi).rounded()
            #expect(pixels <= Double(InputLimits.imagePixels), "\(paper) at \(Int(dpi)) dpi is \(pixels) pixels")
        }
    }
}

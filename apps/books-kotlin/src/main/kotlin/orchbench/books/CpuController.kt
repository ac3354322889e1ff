package orchbench.books

import org.springframework.http.HttpStatus
import org.springframework.http.MediaType
import org.springframework.http.ResponseEntity
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.RequestParam
import org.springframework.web.bind.annotation.RestController
import java.util.Locale

/**
 * GET /cpu-intensive?num=N: the study's CPU route, sum of atan(i) * tan(i)
 * for i in [0, N^7). StrictMath is fdlibm, as V8's Math.atan and Math.tan
 * are, so books-node computes the very same double; the answer carries it
 * with six decimals so a probe can compare the two apps.
 */
@RestController
class CpuController {
    @GetMapping("/cpu-intensive")
    fun cpu(@RequestParam(required = false) num: String?): ResponseEntity<String> {
        val n = parseNum(num)
        val iterations = pow7(n)
        var result = 0.0
        for (i in 0 until iterations) {
            val x = i.toDouble()
            result += StrictMath.atan(x) * StrictMath.tan(x)
        }
        val body = String.format(Locale.ROOT, "{\"num\":%d,\"iterations\":%d,\"result\":%.6f}", n, iterations, result)
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body)
    }

    companion object {
        const val MAX_NUM = 10

        fun pow7(n: Int): Long {
            var p = 1L
            repeat(7) { p *= n }
            return p
        }

        fun parseNum(s: String?): Int {
            if (s == null) throw ApiError(HttpStatus.BAD_REQUEST, "query parameter \"num\" is required (an integer between 0 and $MAX_NUM)")
            val n = if (Regex("^[0-9]{1,2}$").matches(s)) s.toInt() else -1
            if (n < 0 || n > MAX_NUM) {
                throw ApiError(HttpStatus.BAD_REQUEST, "query parameter \"num\" must be an integer between 0 and $MAX_NUM, got \"$s\"")
            }
            return n
        }
    }
}

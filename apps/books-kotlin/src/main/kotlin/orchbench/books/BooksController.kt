package orchbench.books

import com.fasterxml.jackson.databind.DeserializationFeature
import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.ObjectMapper
import org.springframework.http.HttpStatus
import org.springframework.http.ResponseEntity
import org.springframework.web.bind.annotation.DeleteMapping
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.PatchMapping
import org.springframework.web.bind.annotation.PathVariable
import org.springframework.web.bind.annotation.PostMapping
import org.springframework.web.bind.annotation.RestController
import jakarta.servlet.http.HttpServletRequest

/** What a valid request body sets; null fields are left as they are (PATCH). */
data class BookFields(val title: String?, val author: String?, val year: Int?)

/**
 * The five book routes. The body is read from the request stream and parsed
 * here, whatever its Content-Type (a form content type must not make Spring
 * take it apart; spring.mvc.formcontent.filter.enabled is off), so malformed JSON, a missing field and a wrong type get
 * the same 400 messages as in books-node (apps/books-node/books.js holds the
 * same rules).
 */
@RestController
class BooksController(private val books: BookRepository, mapper: ObjectMapper) {
    private val json = mapper.copy().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)

    @PostMapping("/books")
    fun create(req: HttpServletRequest): ResponseEntity<Any> {
        val f = parseFields(readBody(req), partial = false)
        val saved = books.save(Book(title = f.title!!, author = f.author, year = f.year))
        return ResponseEntity.status(HttpStatus.CREATED).body(saved.toJson())
    }

    @GetMapping("/books")
    fun list(): List<Map<String, Any?>> = books.findAll(org.springframework.data.domain.Sort.by("id")).map { it.toJson() }

    @GetMapping("/books/{id}")
    fun get(@PathVariable id: String): Map<String, Any?> = find(parseId(id)).toJson()

    @PatchMapping("/books/{id}")
    fun patch(@PathVariable id: String, req: HttpServletRequest): Map<String, Any?> {
        val bookId = parseId(id)
        val f = parseFields(readBody(req), partial = true)
        val b = find(bookId)
        f.title?.let { b.title = it }
        f.author?.let { b.author = it }
        f.year?.let { b.year = it }
        return books.save(b).toJson()
    }

    @DeleteMapping("/books/{id}")
    fun delete(@PathVariable id: String): ResponseEntity<Void> {
        val b = find(parseId(id))
        books.delete(b)
        return ResponseEntity.noContent().build()
    }

    private fun find(id: Int): Book =
        books.findById(id).orElseThrow { ApiError(HttpStatus.NOT_FOUND, "book $id not found") }

    /** At most MAX_BODY bytes, as books-node's express.text limit. */
    private fun readBody(req: HttpServletRequest): String {
        val bytes = req.inputStream.readNBytes(MAX_BODY + 1)
        if (bytes.size > MAX_BODY) throw ApiError(HttpStatus.PAYLOAD_TOO_LARGE, "request body is larger than 100kb")
        return String(bytes, Charsets.UTF_8)
    }

    private fun parseFields(raw: String?, partial: Boolean): BookFields {
        val node: JsonNode? = try {
            if (raw.isNullOrEmpty()) null else json.readTree(raw)
        } catch (e: Exception) {
            null
        }
        if (node == null || node.isMissingNode) throw ApiError(HttpStatus.BAD_REQUEST, "request body is not valid JSON")
        if (!node.isObject) throw ApiError(HttpStatus.BAD_REQUEST, "request body must be a JSON object")
        // title is required on create; author and year may be left out
        // (null), as the study's load creates books with a title only
        fun text(name: String, required: Boolean): String? {
            if (!node.has(name)) {
                if (required && !partial) throw ApiError(HttpStatus.BAD_REQUEST, "missing required field \"$name\"")
                return null
            }
            val v = node.get(name)
            if (!v.isTextual || v.asText().isBlank()) throw ApiError(HttpStatus.BAD_REQUEST, "field \"$name\" must be a non-empty string")
            return v.asText()
        }
        val title = text("title", true)
        val author = text("author", false)
        var year: Int? = null
        if (node.has("year")) {
            val v = node.get("year")
            val d = if (v.isNumber) v.asDouble() else Double.NaN
            if (d.isNaN() || d != Math.floor(d) || d < MIN_YEAR || d > MAX_YEAR) {
                throw ApiError(HttpStatus.BAD_REQUEST, "field \"year\" must be an integer between $MIN_YEAR and $MAX_YEAR")
            }
            year = d.toInt()
        }
        if (partial && title == null && author == null && year == null) {
            throw ApiError(HttpStatus.BAD_REQUEST, "request body names no field to update (title, author, year)")
        }
        return BookFields(title, author, year)
    }

    companion object {
        const val MAX_BODY = 100 * 1024
        const val MIN_YEAR = -9999
        const val MAX_YEAR = 9999
        private val ID = Regex("^[0-9]{1,10}$")

        /** An id is a decimal integer that fits PostgreSQL's integer column. */
        fun parseId(s: String): Int {
            val n = if (ID.matches(s)) s.toLong() else -1
            if (n < 0 || n > Int.MAX_VALUE) {
                throw ApiError(HttpStatus.BAD_REQUEST, "id must be an integer between 0 and ${Int.MAX_VALUE}, got \"$s\"")
            }
            return n.toInt()
        }
    }
}

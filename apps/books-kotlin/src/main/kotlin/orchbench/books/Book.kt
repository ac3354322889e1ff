package orchbench.books

import jakarta.persistence.Column
import jakarta.persistence.Entity
import jakarta.persistence.GeneratedValue
import jakarta.persistence.GenerationType
import jakarta.persistence.Id
import jakarta.persistence.Table
import org.springframework.data.jpa.repository.JpaRepository

/** The one table: books(id, title NOT NULL, author, year), as books-node declares it. */
@Entity
@Table(name = "books")
class Book(
    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    var id: Int? = null,
    @Column(nullable = false, columnDefinition = "text")
    var title: String = "",
    @Column(columnDefinition = "text")
    var author: String? = null,
    var year: Int? = null,
) {
    /** The JSON both apps answer with, fields in this order. */
    fun toJson(): Map<String, Any?> = linkedMapOf("id" to id, "title" to title, "author" to author, "year" to year)
}

interface BookRepository : JpaRepository<Book, Int>

// IS4. Content of a message: its creation date and content (the image file for a post without text).
MATCH (message:Message {id: $messageId})
RETURN
  message.creationDate AS messageCreationDate,
  coalesce(message.content, message.imageFile) AS messageContent
